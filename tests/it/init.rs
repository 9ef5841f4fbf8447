//! The shell hook (`tj init bash|zsh`, issue 4) in real bash and zsh: sourced under
//! `-e -u -o pipefail`, with a stub `cargo` on PATH that records its argv and the real tj
//! binary for the active case. zsh cases print a reason and return when zsh is missing.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::*;

/// Writes its arguments, NUL-terminated, to `$STUB_ARGV`, a few bytes a rendition would
/// change (ANSI, `\r`) to stdout, and exits `$STUB_EXIT`.
const STUB: &str = r#"#!/bin/sh
for a in "$@"; do printf '%s\0' "$a"; done > "${STUB_ARGV:-/dev/null}"
printf 'stub out\n\033[31mred\033[0m\r\nline\n'
exit "${STUB_EXIT:-0}"
"#;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sh {
    Bash,
    Zsh,
}

impl Sh {
    fn name(self) -> &'static str {
        match self {
            Sh::Bash => "bash",
            Sh::Zsh => "zsh",
        }
    }
}

/// bash, and zsh when it is installed (else says so: the zsh half of the test is skipped,
/// not passed).
fn shells() -> Vec<Sh> {
    let mut list = vec![Sh::Bash];
    if has("zsh") {
        list.push(Sh::Zsh);
    } else {
        skip("zsh not installed");
    }
    list
}

/// Says why part of a test did not run (ripgrep's `cmd_exists` pattern): never a silent pass.
#[allow(clippy::print_stdout)] // the test harness shows it with --nocapture and on failure
fn skip(reason: &str) {
    println!("skipping: {reason}");
}

fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Who the shell belongs to.
#[derive(Clone, Copy, Debug)]
enum Owner {
    Person,
    Agent,
}

struct Hook {
    env: TestEnv,
    extra: Vec<(OsString, OsString)>,
}

impl Hook {
    fn new() -> Hook {
        let env = TestEnv::new();
        let stub = env.write("bin/cargo", STUB);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
        Hook { env, extra: Vec::new() }
    }

    fn set(mut self, key: &str, value: &str) -> Hook {
        self.extra.push((key.into(), value.into()));
        self
    }

    fn argv_file(&self) -> PathBuf {
        self.env.root.join("argv")
    }

    /// The stub directory, then the tj binary's, then the system's.
    fn path(&self, with_tj: bool) -> OsString {
        let mut dirs = vec![self.env.root.join("bin")];
        if with_tj {
            dirs.push(crate::util::tj_bin().parent().unwrap().to_path_buf());
        }
        // The rest of PATH, minus any directory with a `tj` of its own (an installed tj must
        // not stand in for the one under test, nor defeat "tj is missing").
        dirs.extend(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .filter(|dir| !dir.join("tj").exists()),
        );
        std::env::join_paths(dirs).unwrap()
    }

    fn base(&self, program: &str, owner: Owner, with_tj: bool) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("HOME", self.env.root.join("home"))
            .env("PATH", self.path(with_tj))
            .env("TJ_DATA_DIR", self.env.data())
            .env("TJ_CONFIG_DIR", self.env.root.join("config"))
            .env("STUB_ARGV", self.argv_file())
            .current_dir(self.env.work());
        if let Owner::Agent = owner {
            cmd.env("TJ_AGENT", "1");
        }
        cmd.envs(self.extra.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// `sh` under `-e -u -o pipefail`, sourcing the hook and then running `body` with
    /// `args` as its positional parameters. stdout is a pipe to this test: the agent's.
    fn shell(&self, sh: Sh, owner: Owner, body: &str, args: &[&OsStr]) -> Command {
        let script = format!("eval \"$(tj init {})\"\n{body}", sh.name());
        self.shell_raw(sh, owner, &script, args, true)
    }

    fn shell_raw(
        &self,
        sh: Sh,
        owner: Owner,
        script: &str,
        args: &[&OsStr],
        with_tj: bool,
    ) -> Command {
        let mut cmd = self.base(sh.name(), owner, with_tj);
        match sh {
            Sh::Bash => cmd.args(["--noprofile", "--norc"]),
            Sh::Zsh => cmd.arg("--no-rcs"),
        };
        cmd.args(["-e", "-u", "-o", "pipefail", "-c", script, sh.name()]).args(args);
        cmd
    }

    fn run(&self, cmd: Command) -> Output {
        self.env.run_cmd(cmd, b"")
    }

    /// The stub run directly, as the bytes a pipe would receive.
    fn direct(&self, exit: &str) -> Vec<u8> {
        let mut cmd =
            self.base(self.env.root.join("bin/cargo").to_str().unwrap(), Owner::Person, false);
        cmd.env("STUB_EXIT", exit);
        self.run(cmd).stdout
    }

    /// Files tj stored (any at all means tj ran the command).
    fn artifacts(&self) -> usize {
        fn count(dir: &Path) -> usize {
            std::fs::read_dir(dir).map_or(0, |entries| {
                entries
                    .flatten()
                    .map(|e| if e.path().is_dir() { count(&e.path()) } else { 1 })
                    .sum()
            })
        }
        count(&self.env.data())
    }
}

fn show(sh: Sh, out: &Output) -> String {
    format!(
        "{}: exit {:?}\nstdout: {}\nstderr: {}",
        sh.name(),
        out.status.code(),
        stdout(out),
        stderr(out)
    )
}

#[test]
fn sourcing_twice_under_strict_options_is_silent() {
    for sh in shells() {
        for owner in [Owner::Person, Owner::Agent] {
            let hook = Hook::new();
            let script =
                format!("eval \"$(tj init {0})\"; eval \"$(tj init {0})\"; true", sh.name());
            let out = hook.run(hook.shell_raw(sh, owner, &script, &[], true));
            assert_eq!(out.status.code(), Some(0), "{owner:?} {}", show(sh, &out));
            assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("", ""), "{owner:?}");
        }
    }
}

#[test]
fn sourcing_keeps_the_previous_status_without_set_e() {
    for sh in shells() {
        let hook = Hook::new();
        let script = format!("(exit 7)\nsource <(tj init {})\necho \"status $?\"", sh.name());
        let mut cmd = hook.base(sh.name(), Owner::Agent, true);
        match sh {
            Sh::Bash => cmd.args(["--noprofile", "--norc"]),
            Sh::Zsh => cmd.arg("--no-rcs"),
        };
        cmd.args(["-c", &script]);
        let out = hook.run(cmd);
        assert_eq!(stdout(&out), "status 7\n", "{}", show(sh, &out));
    }
}

#[test]
fn arguments_arrive_byte_exact_active_and_inactive() {
    let args: Vec<&OsStr> = vec![
        OsStr::new("test"),
        OsStr::new("two words"),
        OsStr::new(""),
        OsStr::new("'single'"),
        OsStr::new("\"double\""),
        OsStr::new("$HOME ${PATH} $(false) `false`"),
        OsStr::new("*"),
        OsStr::new("[a-z]?"),
        OsStr::new("line\nbreak"),
        OsStr::new("  padded\t"),
        OsStr::new("back\\slash"),
        OsStr::new("--"),
        OsStr::new("-e"),
        OsStr::new("ünï"),
        OsStr::from_bytes(b"\xff\xfe not utf-8"),
        OsStr::new(""),
    ];
    let mut expected = Vec::new();
    for arg in &args {
        expected.extend_from_slice(arg.as_bytes());
        expected.push(0);
    }
    for sh in shells() {
        for owner in [Owner::Person, Owner::Agent] {
            let hook = Hook::new();
            let out = hook.run(hook.shell(sh, owner, "cargo \"$@\"", &args));
            assert_eq!(out.status.code(), Some(0), "{owner:?} {}", show(sh, &out));
            let got = std::fs::read(hook.argv_file()).unwrap();
            assert_eq!(got, expected, "{} {owner:?}", sh.name());
            // Active means tj ran it (and stored the output); inactive means it did not.
            let ran_through_tj = hook.artifacts() > 0;
            assert_eq!(ran_through_tj, matches!(owner, Owner::Agent), "{} {owner:?}", sh.name());
        }
    }
}

#[test]
fn exit_codes_and_set_e_behave_as_without_the_hook() {
    for sh in shells() {
        for owner in [Owner::Person, Owner::Agent] {
            for code in ["0", "1", "42"] {
                let want_code = Some(code.parse::<i32>().unwrap());
                let hook = Hook::new().set("STUB_EXIT", code);
                // `set -e` ends the shell at a failing command, as it would without the hook.
                let out = hook.run(hook.shell(sh, owner, "cargo\necho after", &[]));
                assert_eq!(out.status.code(), want_code, "{owner:?} {}", show(sh, &out));
                assert_eq!(stdout(&out).ends_with("after\n"), code == "0", "{}", show(sh, &out));
                // And `$?` is the command's for the next one.
                let out = hook.run(hook.shell(
                    sh,
                    owner,
                    "if cargo; then echo ok; else echo \"status $?\"; fi",
                    &[],
                ));
                let want = if code == "0" { "ok\n".to_owned() } else { format!("status {code}\n") };
                assert!(stdout(&out).ends_with(&want), "{owner:?} {}", show(sh, &out));
                let through_tj = hook.artifacts() > 0;
                assert_eq!(through_tj, matches!(owner, Owner::Agent), "{owner:?}");
            }
        }
    }
}

#[test]
fn agent_stdout_gets_the_rendition() {
    for sh in shells() {
        let hook = Hook::new().set("STUB_EXIT", "42");
        let out = hook.run(hook.shell(sh, Owner::Agent, "cargo build", &[]));
        assert_eq!(out.status.code(), Some(42), "{}", show(sh, &out));
        let text = stdout(&out);
        assert!(text.starts_with("[tj] exit 42\n"), "{}", show(sh, &out));
        assert!(!text.contains('\x1b') && text.contains("stub out"), "{text:?}");
        assert_eq!(stderr(&out), "");
    }
}

#[test]
fn pipes_and_files_get_exactly_the_raw_bytes() {
    for sh in shells() {
        let hook = Hook::new().set("STUB_EXIT", "42");
        let raw = hook.direct("42");
        assert!(raw.contains(&0x1b), "the stub writes ANSI: {raw:?}");

        let out = hook.run(hook.shell(sh, Owner::Agent, "cargo build | cat", &[]));
        assert_eq!(out.status.code(), Some(42), "{}", show(sh, &out));
        assert_eq!(out.stdout, raw, "{}", show(sh, &out));

        let file = hook.env.root.join("out.txt");
        let out =
            hook.run(hook.shell(sh, Owner::Agent, "cargo build > \"$1\"", &[file.as_os_str()]));
        assert_eq!(out.status.code(), Some(42), "{}", show(sh, &out));
        assert_eq!(std::fs::read(&file).unwrap(), raw);
        assert_eq!(out.stdout, b"");
        assert_eq!(hook.artifacts(), 0, "transparent runs store nothing");
    }
}

#[test]
fn the_agents_stdout_is_passed_per_call_and_never_exported() {
    for sh in shells() {
        // A record an older hook exported in a parent shell: it names somebody else's stdout.
        let hook = Hook::new().set("STUB_EXIT", "42").set("TJ_AGENT_STDOUT", "1:1");
        let raw = hook.direct("42");
        let body = "cargo build || :\n\
                    cargo build | cat || :\n\
                    env | grep -c '^TJ_AGENT_STDOUT=1:1$' || :";
        let out = hook.run(hook.shell(sh, Owner::Agent, body, &[]));
        assert_eq!(out.status.code(), Some(0), "{}", show(sh, &out));
        let mut want = b"[tj] exit 42\nstub out\nred\nline\n".to_vec();
        want.extend_from_slice(&raw);
        want.extend_from_slice(b"1\n");
        assert_eq!(out.stdout, want, "{}", show(sh, &out));
        // The hook's own record is a shell variable: a child sees none.
        let fresh = Hook::new();
        let out =
            fresh.run(fresh.shell(sh, Owner::Agent, "env | grep -c '^TJ_AGENT_STDOUT=' || :", &[]));
        assert_eq!(stdout(&out), "0\n", "{}", show(sh, &out));
    }
}

/// The wrappers as a harness copies them into the shells it runs commands in: dumped from a
/// shell that sourced the hook, then sourced alone by another process, where the variables
/// of the first are gone (or, `stale_record`, carried along with the old shell's PID).
fn snapshot(hook: &Hook, sh: Sh, stale_record: bool) -> PathBuf {
    let file = hook.env.root.join(format!("snapshot.{}", sh.name()));
    let dump = match sh {
        Sh::Bash => "declare -f > \"$1\"; declare -p __tj_stdout >> \"$1\"",
        Sh::Zsh => "typeset -f > \"$1\"; typeset -p __tj_stdout >> \"$1\"",
    };
    let out = hook.run(hook.shell(sh, Owner::Agent, dump, &[file.as_os_str()]));
    assert_eq!(out.status.code(), Some(0), "{}", show(sh, &out));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("__tj_run"), "{text}");
    if !stale_record {
        let kept: Vec<&str> = text.lines().filter(|l| !l.contains("__tj_stdout=")).collect();
        hook.env.write(&format!("snapshot.{}", sh.name()), &kept.join("\n"));
    }
    file
}

#[test]
fn copied_wrappers_without_their_helper_run_the_command() {
    for sh in shells() {
        let hook = Hook::new().set("STUB_EXIT", "5");
        let file = snapshot(&hook, sh, false);
        let raw = hook.direct("5");
        let text = std::fs::read_to_string(&file).unwrap();
        // A harness that dropped `_`-prefixed functions: the wrappers come without __tj_run.
        let body = ". \"$1\"\nunset -f __tj_run\ncargo build";
        let mut cmd = hook.shell_raw(sh, Owner::Agent, body, &[file.as_os_str()], true);
        cmd.env("CLAUDECODE", "1");
        let out = hook.run(cmd);
        assert!(text.contains("__tj_run"), "{text}");
        assert_eq!(out.status.code(), Some(5), "{}", show(sh, &out));
        assert_eq!(out.stdout, raw, "{}", show(sh, &out));
        assert_eq!(stderr(&out), "");
    }
}

#[test]
fn copied_wrappers_step_aside_for_pipes_and_substitutions() {
    if !Path::new("/proc/self/fd/1").exists() {
        skip("no /proc: copied wrappers cannot compare stdouts");
        return;
    }
    for sh in shells() {
        for stale_record in [false, true] {
            let hook = Hook::new().set("STUB_EXIT", "3");
            let file = snapshot(&hook, sh, stale_record);
            let raw = hook.direct("3");
            // A stale record must be there, or the test proves nothing about it.
            let body = ". \"$1\"\n\
                        if [ \"$2\" = yes ]; then [ -n \"${__tj_stdout-}\" ]; fi\n\
                        cargo build || :\n\
                        cargo build | cat || :\n\
                        x=$(cargo build) || :\n\
                        case $x in *$'\\033'*) echo raw ;; *) echo rendered ;; esac";
            let flag = if stale_record { "yes" } else { "no" };
            let mut cmd =
                hook.shell_raw(sh, Owner::Agent, body, &[file.as_os_str(), OsStr::new(flag)], true);
            // The copy runs in a process that did not source the hook.
            cmd.env("CLAUDECODE", "1");
            let out = hook.run(cmd);
            assert_eq!(out.status.code(), Some(0), "{}", show(sh, &out));
            let mut want = b"[tj] exit 3\nstub out\nred\nline\n".to_vec();
            want.extend_from_slice(&raw);
            want.extend_from_slice(b"raw\n");
            assert_eq!(out.stdout, want, "stale record: {stale_record}\n{}", show(sh, &out));
            assert!(hook.artifacts() > 0, "the first call went through tj");
        }
    }
}

#[test]
fn bypasses_run_the_command_directly() {
    for sh in shells() {
        let hook = Hook::new();
        let raw = hook.direct("0");
        let out = hook.run(hook.shell(sh, Owner::Agent, "command cargo build", &[]));
        assert_eq!(out.stdout, raw, "command cargo: {}", show(sh, &out));
        for var in ["TJ_DISABLE", "TJ_RAW", "TJ_INNER"] {
            let hook = Hook::new().set(var, "1");
            let out = hook.run(hook.shell(sh, Owner::Agent, "cargo build", &[]));
            assert_eq!(out.status.code(), Some(0), "{var}: {}", show(sh, &out));
            assert_eq!(out.stdout, raw, "{var}: {}", show(sh, &out));
            assert_eq!(hook.artifacts(), 0, "{var}");
        }
        assert_eq!(hook.artifacts(), 0);
    }
}

/// What `type`/`whence` and `command -v` say `cargo` is, one per line.
fn what_is_cargo(sh: Sh) -> &'static str {
    match sh {
        Sh::Bash => "type -t cargo; command -v cargo",
        Sh::Zsh => "whence -w cargo; command -v cargo",
    }
}

/// The answer of [`what_is_cargo`] for the stub binary, or for a function.
fn cargo_is(hook: &Hook, sh: Sh, function: bool) -> String {
    let path = hook.env.root.join("bin/cargo");
    match (sh, function) {
        (Sh::Bash, false) => format!("file\n{}\n", path.display()),
        (Sh::Bash, true) => "function\ncargo\n".to_owned(),
        (Sh::Zsh, false) => format!("cargo: command\n{}\n", path.display()),
        (Sh::Zsh, true) => "cargo: function\ncargo\n".to_owned(),
    }
}

#[test]
fn a_persons_shell_is_untouched() {
    for sh in shells() {
        for agent in [None, Some("0"), Some("")] {
            let hook = Hook::new();
            let hook = match agent {
                Some(value) => hook.set("TJ_AGENT", value),
                None => hook,
            };
            let raw = hook.direct("0");
            let functions = match sh {
                Sh::Bash => "declare -F | grep -c __tj_ || :",
                Sh::Zsh => "print -l -- ${(k)functions} | grep -c __tj_ || :",
            };
            let body = format!(
                "{}\ncargo build\nprintf '%s|%s\\n' \"${{TJ_AGENT_STDOUT-unset}}\" \"${{TJ_SESSION-unset}}\"\n{functions}",
                what_is_cargo(sh)
            );
            let out = hook.run(hook.shell(sh, Owner::Person, &body, &[]));
            let mut want = cargo_is(&hook, sh, false).into_bytes();
            want.extend_from_slice(&raw);
            want.extend_from_slice(b"unset|unset\n0\n");
            assert_eq!(out.stdout, want, "TJ_AGENT={agent:?} {}", show(sh, &out));
            assert_eq!(stderr(&out), "");
            assert_eq!(hook.artifacts(), 0, "no tj involvement");
        }
    }
}

#[test]
fn an_agents_shell_gets_the_wrappers() {
    for sh in shells() {
        for var in ["TJ_AGENT", "CLAUDECODE", "CODEX_THREAD_ID", "GEMINI_CLI", "CURSOR_AGENT"] {
            let hook = Hook::new().set(var, "1");
            let out = hook.run(hook.shell(sh, Owner::Person, what_is_cargo(sh), &[]));
            assert_eq!(stdout(&out), cargo_is(&hook, sh, true), "{var}: {}", show(sh, &out));
        }
    }
}

#[test]
fn shell_hook_setting_decides_where_to_wrap() {
    for sh in shells() {
        for (setting, owner, wraps) in [
            ("always", Owner::Person, true),
            ("always", Owner::Agent, true),
            ("never", Owner::Agent, false),
            ("never", Owner::Person, false),
            ("auto", Owner::Person, false),
            ("auto", Owner::Agent, true),
        ] {
            let hook = Hook::new();
            hook.env.write("config/config.json", &format!(r#"{{"shellHook": "{setting}"}}"#));
            let raw = hook.direct("0");
            let body = format!("{}\ncargo build", what_is_cargo(sh));
            let out = hook.run(hook.shell(sh, owner, &body, &[]));
            let what = format!("{setting} {owner:?}: {}", show(sh, &out));
            assert_eq!(out.status.code(), Some(0), "{what}");
            let text = stdout(&out);
            assert!(text.starts_with(&cargo_is(&hook, sh, wraps)), "{what}");
            assert_eq!(hook.artifacts() > 0, wraps, "{what}");
            if wraps && matches!(owner, Owner::Person) {
                // A person's wrapped command runs through tj in terminal mode on a terminal;
                // here stdout is a pipe and no agent is named, so it renders.
                assert!(text.ends_with("stub out\nred\nline\n"), "{what}");
            } else if !wraps {
                assert!(out.stdout.ends_with(&raw), "{what}");
            }
        }
    }
}

#[test]
fn nothing_runs_at_the_prompt() {
    for sh in shells() {
        let hook = Hook::new();
        let (script, want) = match sh {
            Sh::Bash => (
                "eval \"$(tj init bash)\"; printf '%s|' \"${PROMPT_COMMAND-unset}\"; trap -p DEBUG",
                "unset|",
            ),
            Sh::Zsh => (
                "eval \"$(tj init zsh)\"; print -r -- ${#precmd_functions} ${#preexec_functions} ${+functions[precmd]}",
                "0 0 0\n",
            ),
        };
        for owner in [Owner::Person, Owner::Agent] {
            let mut cmd = hook.base(sh.name(), owner, true);
            match sh {
                Sh::Bash => cmd.args(["--noprofile", "--norc", "-i", "-c", script]),
                Sh::Zsh => cmd.args(["--no-rcs", "-i", "-c", script]),
            };
            let out = hook.run(cmd);
            assert_eq!(stdout(&out), want, "{owner:?} {}", show(sh, &out));
        }
    }
}

#[test]
fn a_missing_tj_runs_the_command_directly() {
    for sh in shells() {
        let hook = Hook::new();
        let init = hook.env.run(&["init", sh.name()], b"");
        assert_eq!(init.status.code(), Some(0));
        let text = stdout(&init);
        let bin_line = text.lines().find(|l| l.starts_with("__tj_bin=")).unwrap();
        let text = text.replace(bin_line, "__tj_bin='/nonexistent/tj'");
        let file = hook.env.write("hook.sh", &text);
        let raw = hook.direct("0");
        let script = format!(". '{}'\ncargo build", file.display());
        let out = hook.run(hook.shell_raw(sh, Owner::Agent, &script, &[], false));
        assert_eq!(out.status.code(), Some(0), "{}", show(sh, &out));
        assert_eq!(out.stdout, raw, "{}", show(sh, &out));
        assert_eq!(hook.artifacts(), 0);
    }
}

#[test]
fn sourcing_again_replaces_the_wrapped_commands() {
    for sh in shells() {
        let hook = Hook::new();
        let raw = hook.direct("0");
        let body = format!(
            "eval \"$(tj init {} --commands make,ninja)\"\nprintf '%s\\n' \"$TJ_HOOK_COMMANDS\"\ncargo",
            sh.name()
        );
        let out = hook.run(hook.shell(sh, Owner::Agent, &body, &[]));
        let mut want = b"make ninja\n".to_vec();
        want.extend_from_slice(&raw);
        assert_eq!(out.stdout, want, "{}", show(sh, &out));
        assert_eq!(hook.artifacts(), 0, "cargo is no longer wrapped");
    }
}

#[test]
fn an_alias_of_a_wrapped_name_does_not_break_sourcing() {
    for sh in shells() {
        let hook = Hook::new();
        let script = match sh {
            Sh::Bash => {
                "shopt -s expand_aliases\nalias cargo='cargo --locked'\neval \"$(tj init bash)\""
            }
            Sh::Zsh => "alias cargo='cargo --locked'\neval \"$(tj init zsh)\"",
        };
        let out = hook.run(hook.shell_raw(sh, Owner::Agent, script, &[], true));
        assert_eq!(out.status.code(), Some(0), "{}", show(sh, &out));
        assert_eq!(stderr(&out), "");
    }
}

#[test]
fn session_is_set_once_per_shell() {
    for sh in shells() {
        let hook = Hook::new();
        let body = format!(
            "a=$TJ_SESSION\neval \"$(tj init {})\"\n[ \"$a\" = \"$TJ_SESSION\" ] && printf '%s\\n' \"$a\"",
            sh.name()
        );
        let out = hook.run(hook.shell(sh, Owner::Agent, &body, &[]));
        let session = stdout(&out);
        let (pid, rest) = session.trim_end().split_once('-').unwrap_or_default();
        assert!(pid.parse::<u32>().is_ok() && rest.parse::<u64>().is_ok(), "{}", show(sh, &out));

        let hook = Hook::new().set("TJ_SESSION", "mine");
        let out = hook.run(hook.shell(sh, Owner::Agent, "printf '%s' \"$TJ_SESSION\"", &[]));
        assert_eq!(stdout(&out), "mine");
    }
}

#[test]
fn commands_come_from_the_flag_or_tj_commands() {
    let env = TestEnv::new();
    let out = env.run(&["init", "bash", "--commands", "cargo, npm,,cargo"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("\n__tj_commands='cargo npm'\n"), "{}", stdout(&out));

    let mut cmd = env.cmd(&["init", "zsh"]);
    cmd.env("TJ_COMMANDS", "make,pytest");
    let out = env.run_cmd(cmd, b"");
    assert!(stdout(&out).contains("\n__tj_commands='make pytest'\n"), "{}", stdout(&out));

    let out = env.run(&["init", "bash"], b"");
    assert!(stdout(&out).contains("'cargo npm pnpm yarn bun npx pytest go make "));

    for bad in ["a;b", "if", "cargo npm", "$(x)"] {
        let out = env.run(&["init", "bash", "--commands", bad], b"");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert_eq!(stdout(&out), "", "{bad}");
    }
}

#[test]
fn scripts_pass_shellcheck_and_zsh_n() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shell");
    if has("shellcheck") {
        let out = Command::new("shellcheck").arg(dir.join("tj.bash")).output().unwrap();
        assert!(out.status.success(), "{}", stdout(&out));
        // The generated prelude too, as `tj init bash` prints it.
        let env = TestEnv::new();
        let init = env.run(&["init", "bash"], b"");
        let file = env.write("init.bash", &stdout(&init));
        let out = Command::new("shellcheck").arg(&file).output().unwrap();
        assert!(out.status.success(), "{}", stdout(&out));
    } else {
        skip("shellcheck not installed");
    }
    if has("zsh") {
        let out = Command::new("zsh").arg("-n").arg(dir.join("tj.zsh")).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    } else {
        skip("zsh not installed");
    }
}

#[test]
fn doctor_shell_explains_the_hook_and_the_agent() {
    for sh in shells() {
        let hook = Hook::new().set("CLAUDECODE", "1");
        let out = hook.run(hook.shell(sh, Owner::Person, "tj doctor shell", &[]));
        assert_eq!(out.status.code(), Some(0), "{}", show(sh, &out));
        let text = stdout(&out);
        for want in [
            format!("loaded ({}, this shell", sh.name()),
            "cargo npm pnpm".to_owned(),
            "CLAUDECODE is set".to_owned(),
            "active   yes".to_owned(),
            "stdout   a pipe (".to_owned(),
            "tj run   agent mode".to_owned(),
        ] {
            assert!(text.contains(&want), "missing {want:?}\n{text}");
        }

        // A person's shell: loaded, and wrapping nothing, for a reason it names.
        let hook = Hook::new();
        let out = hook.run(hook.shell(sh, Owner::Person, "tj doctor shell", &[]));
        assert_eq!(out.status.code(), Some(0), "{}", show(sh, &out));
        let text = stdout(&out);
        assert!(text.contains("wrapped  nothing: this is not an agent's shell"), "{text}");
        assert!(text.contains(r#""shellHook": "always""#), "{text}");
        assert!(!text.contains("active "), "{text}");

        let hook = Hook::new();
        hook.env.write("config/config.json", r#"{"shellHook": "always"}"#);
        let out = hook.run(hook.shell(sh, Owner::Person, "tj doctor shell", &[]));
        let text = stdout(&out);
        assert!(text.contains(r#"not an agent's shell, but shellHook is "always""#), "{text}");
        assert!(text.contains("active   yes"), "{text}");

        let hook = Hook::new();
        hook.env.write("config/config.json", r#"{"shellHook": "never"}"#);
        let out = hook.run(hook.shell(sh, Owner::Agent, "tj doctor shell", &[]));
        assert!(
            stdout(&out).contains(r#"wrapped  nothing: shellHook is "never""#),
            "{}",
            show(sh, &out)
        );

        let hook = Hook::new();
        let out = hook.run(hook.shell_raw(sh, Owner::Person, "tj doctor shell", &[], true));
        assert_eq!(out.status.code(), Some(1), "{}", show(sh, &out));
        assert!(stdout(&out).contains("not loaded"), "{}", stdout(&out));
    }
}

#[test]
fn the_config_file_chooses_the_commands_unless_the_flag_does() {
    let env = TestEnv::new();
    env.write("config/config.json", r#"{"shellCommands": ["cargo", "just", "not a name"]}"#);
    let out = env.run(&["init", "bash"], b"");
    let text = stdout(&out);
    assert!(text.contains("__tj_commands='cargo just'\n"), "{text}");
    assert!(stderr(&out).contains("`not a name` is not a command name"), "{}", stderr(&out));
    let text = stdout(&env.run(&["init", "bash", "--commands", "make"], b""));
    assert!(text.contains("__tj_commands='make'\n"), "{text}");
}
