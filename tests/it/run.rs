//! `tj run` through the binary, without an outer terminal: stdout is a pipe, so tj is in
//! agent mode unless told otherwise. (Terminal-mode behaviour is in `pty.rs`.)

use std::process::{Command, Stdio};

use crate::util::*;

fn script(env: &TestEnv, name: &str, body: &str) -> String {
    let path = env.write(&format!("work/{name}"), body);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.display().to_string()
}

/// A fake `cargo test` run on stdout, exiting 101.
const CARGO_TEST: &str = r#"#!/bin/sh
echo "   Compiling demo v0.1.0 (/tmp/demo)"
echo "running 401 tests"
i=0
while [ $i -lt 400 ]; do echo "test module::tests::case_$i ... ok"; i=$((i+1)); done
echo "test module::tests::broken ... FAILED"
echo ""
echo "---- module::tests::broken stdout ----"
echo "thread 'module::tests::broken' panicked at src/lib.rs:10:5:"
echo "assertion \`left == right\` failed"
echo "  left: 1"
echo " right: 2"
echo ""
echo "test result: FAILED. 400 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out"
exit 101
"#;

#[test]
fn agent_mode_prints_only_the_rendition_and_keeps_the_exit_code() {
    let env = TestEnv::new();
    let cargo = script(&env, "cargo", CARGO_TEST);
    let mut cmd = env.cmd(&["run", "--", "cargo", "test"]);
    let path = format!("{}:{}", env.work().display(), std::env::var("PATH").unwrap_or_default());
    cmd.env("PATH", path);
    let out = env.run_cmd(cmd, b"");
    assert_eq!(out.status.code(), Some(101), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("[tj] exit 101"), "{text}");
    for keep in [
        "test module::tests::broken ... FAILED",
        "  left: 1",
        " right: 2",
        "test result: FAILED. 400 passed",
    ] {
        assert!(text.contains(keep), "missing {keep:?}\n{text}");
    }
    assert!(!text.contains("case_200 ... ok"));
    assert_eq!(stderr(&out), "");
    assert!(cargo.ends_with("cargo"));
}

/// Agent mode, every command an agent runs, starts no thread: tj reads the output and its
/// signals on its one thread (issue 13). The command counts the threads of tj, its nearest
/// ancestor of that name; its output still comes back whole, with its exit code.
#[cfg(target_os = "linux")]
#[test]
fn agent_mode_runs_the_command_from_one_thread() {
    let env = TestEnv::new();
    let count = r#"p=$PPID; while [ "$(cat /proc/$p/comm)" != tj ]; do
                       p=$(sed 's/.*) . \([0-9]*\).*/\1/' /proc/$p/stat); done
                   echo "tj threads: $(ls /proc/$p/task | wc -l)"; exit 3"#;
    for mode in ["--agent", "--no-pty"] {
        let out = env.run(&["run", mode, "--", "sh", "-c", count], b"");
        assert_eq!(out.status.code(), Some(3), "{mode}: {}", stderr(&out));
        assert!(stdout(&out).contains("tj threads: 1"), "{mode}: {}", stdout(&out));
    }
}

/// Output that keeps coming is read without a wait before every read (issue 13), on the
/// relay's own thread (agent mode) and on the output thread (live), through the PTY: tj
/// waits (`poll`) only when a read found nothing (EAGAIN, counted as a failed read), and
/// otherwise every 64 reads. Before, it waited before each of the 8 MB's 2,000-odd reads. How
/// often the output runs dry depends on the machine's load; that it is waited for only
/// then does not.
#[cfg(target_os = "linux")]
#[test]
fn output_that_keeps_coming_is_read_without_a_wait_before_every_read() {
    let env = TestEnv::new();
    let big = env.work().join("8mb.txt");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
    for i in 0..80_000 {
        std::io::Write::write_all(&mut file, format!("{i:08} {}\n", "x".repeat(90)).as_bytes())
            .unwrap();
    }
    file.into_inner().unwrap().sync_all().unwrap();
    for mode in ["--agent", "--live"] {
        let log = env.work().join("strace.log");
        let tj = env.cmd(&["run", mode, "--", "cat", "8mb.txt"]);
        let mut strace = Command::new("strace");
        strace
            .args(["--seccomp-bpf", "-f", "-qq", "-c", "-U", "name,calls,errors", "-o"])
            .arg(&log)
            .args(["-e", "trace=read,poll,ppoll", "--"])
            .arg(tj.get_program())
            .args(tj.get_args())
            .env_clear()
            .envs(tj.get_envs().filter_map(|(key, value)| Some((key, value?))))
            .current_dir(env.work());
        let out = run_within(strace, b"", std::time::Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", stderr(&out));
        let table = std::fs::read_to_string(&log).unwrap();
        // `column` of the row `name`: 0 the calls, 1 the failed ones (blank when none).
        let count = |name: &str, column: usize| -> u64 {
            let row = table.lines().find(|line| line.split_whitespace().next() == Some(name));
            row.and_then(|row| row.split_whitespace().nth(1 + column)?.parse().ok()).unwrap_or(0)
        };
        let (reads, found_nothing) = (count("read", 0), count("read", 1));
        let waits = count("poll", 0) + count("ppoll", 0);
        assert!(reads > 500, "{mode}: only {reads} reads:\n{table}");
        // Once at the start and at the exit, and a few of tj's own besides the output's.
        let allowed = found_nothing + reads / 64 + 16;
        assert!(waits <= allowed, "{mode}: {waits} waits for {reads} reads:\n{table}");
    }
}

#[test]
fn exit_codes_map_through() {
    let env = TestEnv::new();
    for code in [0, 1, 2, 101, 126, 127, 255] {
        let out = env.run(&["run", "--", "sh", "-c", &format!("echo x; exit {code}")], b"");
        assert_eq!(out.status.code(), Some(code), "exit {code}: {}", stderr(&out));
    }
}

#[test]
fn signals_give_128_plus_n() {
    use std::os::unix::process::ExitStatusExt;
    let env = TestEnv::new();
    // tj dies of the child's signal (a shell's `$?` is then 128+N). The child's INT, QUIT
    // and HUP are reset: a test binary started with `cargo test &` ignores them.
    for (sig, n) in [("TERM", 15), ("INT", 2), ("HUP", 1), ("KILL", 9)] {
        let args = ["run", "--", "env", "--default-signal=INT,QUIT,HUP", "sh", "-c"];
        let out = env.run(&[&args[..], &[&format!("kill -{sig} $$")]].concat(), b"");
        assert_eq!(out.status.signal(), Some(n), "{sig}: {}", stderr(&out));
    }
}

#[test]
fn spawn_failures_are_126_and_127_with_a_message() {
    let env = TestEnv::new();
    let out = env.run(&["run", "--", "no-such-command-xyz"], b"");
    assert_eq!(out.status.code(), Some(127));
    assert_eq!(stderr(&out).trim(), "tj: no-such-command-xyz: command not found");
    let file = env.write("work/not-exec.sh", "#!/bin/sh\necho hi\n");
    let out = env.run(&["run", "--", file.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(126), "{}", stderr(&out));
    assert!(stderr(&out).contains("not-exec.sh"), "{}", stderr(&out));
    let bad = script(&env, "bad-interp.sh", "#!/nonexistent/interp\necho hi\n");
    let out = env.run(&["run", "--", &bad], b"");
    assert!(matches!(out.status.code(), Some(126 | 127)), "{:?}", out.status);
    assert!(stderr(&out).contains("bad-interp.sh"), "{}", stderr(&out));
}

/// An exec refused for another reason than the file's absence ends as under env(1), 126, in
/// every mode: a loop of symbolic links, a name too long. tj's own 125 is for what is not
/// the command's.
#[test]
fn exec_refusals_other_than_absence_are_126_as_under_env() {
    let env = TestEnv::new();
    let looped = env.root.join("work/loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let too_long = format!("{}/{}", env.root.join("work").display(), "n".repeat(300));
    for (what, program) in
        [("a symlink loop", looped.to_str().unwrap()), ("a long name", &too_long)]
    {
        let without = Command::new("env").arg(program).output().unwrap();
        assert_eq!(without.status.code(), Some(126), "env, {what}: {}", stderr(&without));
        let modes = [&["run", "--agent"][..], &["run", "--agent", "--no-pty"][..], &["run"][..]];
        for mode in modes {
            let argv: Vec<&str> = mode.iter().copied().chain(["--", program]).collect();
            let out = env.run(&argv, b"");
            assert_eq!(out.status.code(), Some(126), "{what}, {mode:?}: {}", stderr(&out));
            assert!(stderr(&out).contains(program), "{what}, {mode:?}: {}", stderr(&out));
        }
    }
}

/// A file with no `#!` line runs under `/bin/sh`, as `env(1)` runs it (glibc's `execvp`),
/// in the musl build too, whose `execvp` does not; so does an empty one.
#[test]
fn a_script_without_a_shebang_runs_under_sh_as_with_env() {
    let env = TestEnv::new();
    let plain = script(&env, "plain.sh", "echo \"args=$*\" \"zero=$0\"\nexit 7\n");
    let empty = script(&env, "empty.sh", "");
    let binary = script(&env, "blob.bin", "\0\x01\x02 data, not a program\n");
    for (file, args) in [(&plain, vec!["a b", "c"]), (&empty, vec![]), (&binary, vec![])] {
        let mut argv = vec![file.as_str()];
        argv.extend(&args);
        let without = Command::new("env").args(&argv).output().unwrap();
        let code = without.status.code().unwrap();
        // The last: transparent mode, where tj execs the command in its own place.
        let modes = [&["run", "--agent"][..], &["run", "--agent", "--no-pty"][..], &["run"][..]];
        for (n, mode) in modes.into_iter().enumerate() {
            let tj: Vec<&str> = mode.iter().copied().chain(["--"]).chain(argv.clone()).collect();
            let mut cmd = env.cmd(&tj);
            if n == 2 {
                cmd.env("TJ_DISABLE", "1");
            }
            let out = env.run_cmd(cmd, b"");
            assert_eq!(out.status.code(), Some(code), "{file} {mode:?}: {}", stderr(&out));
            let said = String::from_utf8_lossy(&without.stdout);
            assert!(stdout(&out).contains(said.trim()), "{mode:?}: {}", stdout(&out));
        }
    }
}

#[test]
fn stdin_is_inherited_when_it_is_not_a_terminal() {
    let env = TestEnv::new();
    // EOF at once: `read` returns and the child exits.
    let mut cmd = env.cmd(&["run", "--", "sh", "-c", "read x; echo done:$?"]);
    cmd.stdin(Stdio::null());
    let out = cmd.output().unwrap();
    assert!(stdout(&out).contains("done:1"), "{}", stdout(&out));
    // A 10,000-char line arrives whole.
    let line = format!("{}\n", "y".repeat(10_000));
    let out = env.run(&["run", "--", "wc", "-c"], line.as_bytes());
    assert_eq!(stdout(&out).trim(), "10001");
}

#[test]
fn emit_file_gets_the_rendition_and_stdout_the_clean_live_stream() {
    let env = TestEnv::new();
    let target = env.work().join("rendition.txt");
    let out = env.run(
        &["run", "--emit", target.to_str().unwrap(), "--", "sh", "-c", "printf 'hello\\n'; exit 4"],
        b"",
    );
    assert_eq!(out.status.code(), Some(4));
    // stdout carries the clean live stream; the rendition went to the file.
    assert_eq!(stdout(&out), "hello\n");
    // The side channel's reader has tj's exit status: no `[tj] exit` line there.
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");
    // JSON on request.
    let out = env.run(
        &[
            "run",
            "--emit",
            target.to_str().unwrap(),
            "--emit-format",
            "json",
            "--",
            "sh",
            "-c",
            "echo hi",
        ],
        b"",
    );
    assert!(out.status.success());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(v["inlineText"], "hi");
    assert_eq!(v["exitCode"], 0);
    assert!(v["durationMs"].is_u64());
}

/// `sh -c line` in the test's directory, with `$TJ` the tj under test and `$EMIT` the side
/// file `emit`.
fn sh_emitting(env: &TestEnv, line: &str, emit: &std::path::Path) -> std::process::Output {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", line])
        .env("TJ", crate::util::tj_bin_str())
        .env("EMIT", emit)
        .env("TJ_DATA_DIR", env.data())
        .env("TJ_CONFIG_DIR", env.root.join("config"))
        .current_dir(env.work());
    env.run_cmd(cmd, b"")
}

/// A run with no rendition (the command was not found; tj could not set up the run and
/// ran the command in its place) says so on the side channel, instead of leaving an earlier
/// run's rendition there for the harness to take for this one's.
#[test]
fn a_run_without_a_rendition_replaces_what_the_side_file_held() {
    let env = TestEnv::new();
    let target = env.work().join("rendition.txt");
    let emit = target.to_str().unwrap();
    let first = env.run(&["run", "--emit", emit, "--", "sh", "-c", "echo FIRST; exit 1"], b"");
    assert_eq!(first.status.code(), Some(1));
    assert!(std::fs::read_to_string(&target).unwrap().contains("FIRST"));

    let missing = env.run(&["run", "--emit", emit, "--", "no-such-command-here"], b"");
    assert_eq!(missing.status.code(), Some(127));
    let side = std::fs::read_to_string(&target).unwrap();
    assert_eq!(side, "[tj] no-such-command-here: command not found\n");

    let json = ["run", "--emit", emit, "--emit-format", "json", "--", "no-such-command-here"];
    let missing = env.run(&json, b"");
    assert_eq!(missing.status.code(), Some(127));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(v["exitCode"], 127);
    assert_eq!(v["reduced"], false);
    assert_eq!(v["inlineText"], "[tj] no-such-command-here: command not found");

    // Too few descriptors for tj's pipes: the command runs in tj's place.
    let line = r#"ulimit -n 12 && exec "$TJ" run --emit "$EMIT" -- sh -c 'echo hi; exit 4'"#;
    let out = sh_emitting(&env, line, &target);
    assert_eq!(out.status.code(), Some(4), "{}", crate::util::stderr(&out));
    assert_eq!(stdout(&out), "hi\n");
    let side = std::fs::read_to_string(&target).unwrap();
    assert!(side.starts_with("[tj] ") && side.contains("the command ran without tj"), "{side}");
}

/// A run that goes transparent (tj is disabled, stdout is not the agent's, a standard
/// descriptor was closed) leaves no earlier rendition on the side channel either, and adds
/// nothing to the command's output; a run nested in another leaves it to the outer one.
#[test]
fn a_run_in_tj_s_place_replaces_what_the_side_file_held() {
    let env = TestEnv::new();
    let target = env.work().join("rendition.txt");
    let runs = [
        ("TJ_DISABLE=1 \"$TJ\" run --emit \"$EMIT\" -- sh -c 'echo hi'", Some("TJ_DISABLE is set")),
        (
            "\"$TJ\" run --agent-stdout 1:1 --emit \"$EMIT\" -- sh -c 'echo hi'",
            Some("stdout is not the agent's"),
        ),
        (
            "\"$TJ\" run --emit \"$EMIT\" -- sh -c 'echo hi' <&-",
            Some("stdin, stdout or stderr was closed"),
        ),
        ("TJ_INNER=1 \"$TJ\" run --emit \"$EMIT\" -- sh -c 'echo hi'", None),
    ];
    for (line, why) in runs {
        let first =
            env.run(&["run", "--emit", target.to_str().unwrap(), "--", "echo", "FIRST"], b"");
        assert_eq!(first.status.code(), Some(0));
        let out = sh_emitting(&env, line, &target);
        assert_eq!(out.status.code(), Some(0), "{line}: {}", crate::util::stderr(&out));
        assert_eq!(stdout(&out), "hi\n", "{line}");
        assert_eq!(crate::util::stderr(&out), "", "{line}");
        let side = std::fs::read_to_string(&target).unwrap();
        match why {
            Some(why) => assert!(
                side.starts_with("[tj] no rendition: ")
                    && side.contains(why)
                    && !side.contains("FIRST"),
                "{line}: {side}"
            ),
            None => assert!(side.contains("FIRST"), "{line}: {side}"),
        }
    }
}

#[test]
fn transparent_mode_is_exactly_a_direct_run() {
    let env = TestEnv::new();
    let body = "printf '\\033[31mred\\033[0m\\r\\n'; echo err >&2; exit 7";
    let direct = std::process::Command::new("sh").args(["-c", body]).output().unwrap();
    let mut cmd = env.cmd(&["run", "--", "sh", "-c", body]);
    cmd.env("TJ_DISABLE", "1");
    let out = cmd.output().unwrap();
    assert_eq!(out.stdout, direct.stdout);
    assert_eq!(out.stderr, direct.stderr);
    assert_eq!(out.status.code(), Some(7));
    // Nothing was stored: transparent means no capture.
    assert!(!env.data().join("spill").exists());

    // Output going somewhere other than the agent's stdout: transparent too.
    let mut cmd = env.cmd(&["run", "--agent-stdout", "1:1", "--", "sh", "-c", body]);
    let out = cmd.output().unwrap();
    assert_eq!(out.stdout, direct.stdout);
    assert_eq!(out.status.code(), Some(7));
}

#[test]
fn nested_tj_run_goes_transparent() {
    let env = TestEnv::new();
    let tj = crate::util::tj_bin_str();
    let out = env.run(&["run", "--", tj, "run", "--", "sh", "-c", "echo inner; exit 3"], b"");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stdout(&out), "[tj] exit 3\ninner\n");
}

#[test]
fn unwritable_data_dir_fails_open() {
    let env = TestEnv::new();
    let blocker = env.write("blocker", "a file, not a directory");
    let mut cmd = env.cmd(&["run", "--", "sh", "-c", "echo still here; exit 5"]);
    cmd.env("TJ_DATA_DIR", blocker.join("sub"));
    let out = env.run_cmd(cmd, b"");
    assert_eq!(out.status.code(), Some(5));
    assert!(stdout(&out).contains("still here"));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("the rendition is the whole original"), "{err}");
}

#[test]
fn corrupt_store_fails_open() {
    let env = TestEnv::new();
    // The spill directory is a file: nothing can be stored there.
    env.write("data/spill", "corrupt");
    let out = env.run(&["run", "--", "sh", "-c", "echo ok; exit 0"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("ok"));
    assert!(stderr(&out).starts_with("tj: warning:"), "{}", stderr(&out));
}

#[test]
fn no_pty_mode_interleaves_stdout_and_stderr_on_one_pipe() {
    let env = TestEnv::new();
    let out = env.run(&["run", "--no-pty", "--", "sh", "-c", "echo a; echo b >&2; echo c"], b"");
    assert_eq!(stdout(&out), "a\nb\nc\n");
}

#[test]
fn the_child_sees_tj_inner_and_no_columns() {
    let env = TestEnv::new();
    let mut cmd = env.cmd(&[
        "run",
        "--",
        "sh",
        "-c",
        "echo inner=$TJ_INNER cols=${COLUMNS-unset} pager=$PAGER prompt=$GIT_TERMINAL_PROMPT",
    ]);
    cmd.env("COLUMNS", "123");
    let out = env.run_cmd(cmd, b"");
    assert_eq!(stdout(&out).trim(), "inner=1 cols=unset pager=cat prompt=0");
}

/// The command gets tj's environment in tj's order, byte for byte (`=` in a value, an empty
/// value, bytes that are not UTF-8, an entry with no `=` at all, which a parent may put there
/// and std's reading of the environment leaves out), less what tj removes, with what tj sets
/// last: on a PTY, where it is exec'd from tj's own plan (`run::exec::ExecPlan`), and with
/// `--no-pty`, where std execs it. It prints its own environment block
/// (`/proc/self/environ`) in hex, so that the rendition carries the bytes.
#[cfg(target_os = "linux")]
#[test]
fn the_child_gets_tj_s_environment_in_its_order_and_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let mut vars: Vec<Vec<u8>> = vec![
        b"ZZ_TJ_FIRST=a=b".to_vec(),
        b"AA_TJ_SECOND=".to_vec(),
        b"NN_TJ_NO_EQUALS".to_vec(),
        b"COLUMNS=80".to_vec(),
        b"MM_TJ_THIRD=\xff\xfe".to_vec(),
    ];
    for (key, value) in env.cmd(&[]).get_envs() {
        let mut var = key.as_bytes().to_vec();
        var.push(b'=');
        var.extend_from_slice(value.unwrap_or_default().as_bytes());
        vars.push(var);
    }
    for mode in [&[][..], &["--no-pty"]] {
        let mut args = vec![crate::util::tj_bin_str(), "run", "--raw"];
        args.extend(mode);
        args.extend(["--", "od", "-An", "-v", "-tx1", "/proc/self/environ"]);
        let mut cmd = exec_with_environment(&args, &vars);
        cmd.current_dir(env.work());
        let out = env.run_cmd(cmd, b"");
        assert!(out.status.success(), "{mode:?}: {}", stderr(&out));
        let block: Vec<u8> = stdout(&out)
            .split_whitespace()
            .map(|hex| u8::from_str_radix(hex, 16).unwrap())
            .collect();
        let entries: Vec<&[u8]> =
            block.split(|&b| b == 0).filter(|entry| !entry.is_empty()).collect();
        let ours: Vec<&[u8]> = entries
            .iter()
            .copied()
            .filter(|entry| {
                ["ZZ_TJ_", "AA_TJ_", "NN_TJ_", "MM_TJ_", "COLUMNS=", "TJ_INNER="]
                    .iter()
                    .any(|name| entry.starts_with(name.as_bytes()))
            })
            .collect();
        assert_eq!(
            ours,
            [
                &b"ZZ_TJ_FIRST=a=b"[..],
                b"AA_TJ_SECOND=",
                b"NN_TJ_NO_EQUALS",
                b"MM_TJ_THIRD=\xff\xfe",
                b"TJ_INNER=1"
            ],
            "{mode:?}: {entries:?}"
        );
    }
}

/// A command that execs `args` (the first a path) with exactly the environment block `vars`:
/// not through `env -i`, which takes a word without `=` for the command, nor std's
/// `Command::env`, which sorts the variables and cannot make such an entry. Everything the
/// exec needs is made before the fork; the child only reads it.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn exec_with_environment(args: &[&str], vars: &[Vec<u8>]) -> Command {
    use std::ffi::CString;
    use std::os::unix::process::CommandExt;
    let strings: Vec<CString> = args
        .iter()
        .map(|arg| CString::new(*arg).unwrap())
        .chain(vars.iter().map(|var| CString::new(var.clone()).unwrap()))
        .collect();
    let pointers = |all: &[CString]| -> Vec<usize> {
        all.iter().map(|s| s.as_ptr() as usize).chain(std::iter::once(0)).collect()
    };
    let (argv, envp) = (pointers(&strings[..args.len()]), pointers(&strings[args.len()..]));
    let mut cmd = Command::new("/bin/false");
    // SAFETY: between fork and exec, only execve(2), on pointers into `strings`, which the
    // closure owns and which were made before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let _owner = &strings;
            libc::execve(
                argv[0] as *const libc::c_char,
                argv.as_ptr().cast::<*const libc::c_char>(),
                envp.as_ptr().cast::<*const libc::c_char>(),
            );
            Err(std::io::Error::last_os_error())
        });
    }
    cmd
}

#[test]
fn agent_live_stream_is_ansi_free_with_collapsed_frames() {
    let env = TestEnv::new();
    let target = env.work().join("r.txt");
    let body = "printf '\\033[1mbold\\033[0m\\n'; printf 'step 1\\rstep 2\\rdone  \\n'";
    let out = env.run(&["run", "--emit", target.to_str().unwrap(), "--", "sh", "-c", body], b"");
    assert_eq!(stdout(&out), "bold\ndone  \n");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "bold\ndone\n");
}

#[test]
fn agent_mode_ends_a_child_blocked_on_a_terminal_prompt() {
    let env = TestEnv::new();
    let mut cmd = env.cmd(&[
        "run",
        "--",
        "sh",
        "-c",
        "echo building; printf 'Continue? [y/N] '; read x < /dev/tty; echo never",
    ]);
    cmd.env("TJ_BLOCKED_AFTER", "0.3").stdin(Stdio::null());
    let out = cmd.output().unwrap();
    // Ended with SIGTERM, which tj then dies of.
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&out.status), Some(15));
    let text = stdout(&out);
    assert!(text.starts_with("[tj] blocked on input: "), "{text}");
    assert!(text.contains("Continue? [y/N]"), "{text}");
    assert!(!text.contains("never"));
    assert!(stderr(&out).contains("blocked on input"), "{}", stderr(&out));
}

#[test]
fn setup_warnings_wait_until_the_command_has_ended() {
    // The configuration and rules are read while the command runs; what is wrong with them
    // is said after its output, never in the middle of it. (A side channel: without one, a
    // live run makes no rendition and reads neither.)
    let env = TestEnv::new();
    env.write("config/config.json", "{");
    let side = env.work().join("side.txt");
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut cmd = env.cmd(&["run", "--live", "--emit", side.to_str().unwrap(), "--"]);
    cmd.args(["sh", "-c", "echo one; sleep 0.3; echo two"]);
    cmd.stdin(Stdio::null()).stdout(writer.try_clone().unwrap()).stderr(writer);
    let mut child = spawn_retrying(&mut cmd);
    drop(cmd);
    let mut text = String::new();
    std::io::Read::read_to_string(&mut reader, &mut text).unwrap();
    assert!(child.wait().unwrap().success(), "{text}");
    let two = text.find("two").unwrap_or_else(|| panic!("no output: {text}"));
    let warning = text.find("tj: ").unwrap_or_else(|| panic!("no warning: {text}"));
    assert!(two < warning, "{text}");
}

/// A run a person watched (terminal mode, no side channel) is no rendition an agent has
/// seen: the agent's first run of the same output gets the rendition, not a stub naming
/// it; and a watched run of bytes an agent run stored leaves that run's record as it was.
#[test]
fn a_watched_run_neither_dedupes_nor_overwrites_an_agent_run() {
    let env = TestEnv::new();
    script(&env, "cargo", CARGO_TEST);
    let path = format!("{}:{}", env.work().display(), std::env::var("PATH").unwrap_or_default());
    let run = |mode: &str| {
        let mut cmd = env.cmd(&["run", mode, "--", "cargo", "test"]);
        cmd.env("PATH", &path).env("TJ_SESSION", "s1");
        let out = env.run_cmd(cmd, b"");
        assert_eq!(out.status.code(), Some(101), "{}", stderr(&out));
        stdout(&out)
    };
    run("--live");
    let agent = run("--agent");
    assert!(agent.contains("test module::tests::broken ... FAILED"), "{agent}");
    assert!(!agent.contains("same output as"), "{agent}");

    // Same bytes, yet an id of its own (a watched run's id does not name its content): the
    // agent run's rule and rendition stay on record, and each watched run is listed.
    run("--live");
    let ls = stdout(&env.run(&["ls"], b""));
    let (live, given): (Vec<&str>, Vec<&str>) = ls.lines().partition(|l| l.contains("(live)"));
    assert_eq!((live.len(), given.len()), (2, 1), "{ls}");
    let ids: Vec<&str> = ls.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(ids.iter().all(|id| id.len() == 12) && ids[0] != ids[1], "{ls}");
    let id = given[0].split_whitespace().next().unwrap().to_owned();
    let reduced = env.run(&["expand", &id, "--reduced"], b"");
    assert!(reduced.status.success(), "{}", stderr(&reduced));
    assert!(stdout(&reduced).contains("... FAILED"), "{}", stdout(&reduced));
    for line in live {
        let id = line.split_whitespace().next().unwrap();
        let raw = env.run(&["expand", id], b"");
        assert!(stdout(&raw).contains("test module::tests::broken ... FAILED"), "{id}");
    }
    let ledger = std::fs::read_to_string(env.data().join("ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 1, "{ledger}");
}

/// `--emit-fd N` with nothing open as N: the rendition goes to stdout, said once, and the
/// run is counted (the agent got it there).
#[test]
fn an_emit_fd_that_is_not_open_sends_the_rendition_to_stdout() {
    let env = TestEnv::new();
    for (flag, env_fd) in [(Some("97"), None), (None, Some("97"))] {
        let mut args = vec!["run", "--agent"];
        if let Some(fd) = flag {
            args.extend(["--emit-fd", fd]);
        }
        args.extend(["--", "sh", "-c", "echo ran; exit 3"]);
        let mut cmd = env.cmd(&args);
        if let Some(fd) = env_fd {
            cmd.env("TJ_EMIT_FD", fd);
        }
        let out = env.run_cmd(cmd, b"");
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert!(stdout(&out).contains("ran"), "{}", stdout(&out));
        let warning = "--emit-fd 97: descriptor 97 is not open; the rendition goes to stdout\n";
        assert!(stderr(&out).ends_with(warning), "{}", stderr(&out));
        assert_eq!(stderr(&out).matches("descriptor 97").count(), 1, "{}", stderr(&out));
    }
    let ledger = std::fs::read_to_string(env.data().join("ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 2, "{ledger}");
}

/// `--emit` (or `TJ_EMIT`) naming what cannot take a rendition (a file in a directory that
/// does not exist, a directory) is dropped before the run with one warning: the rendition
/// goes to stdout, the exit code is the command's, and nothing else complains later.
#[test]
fn an_emit_path_that_cannot_be_written_sends_the_rendition_to_stdout() {
    let env = TestEnv::new();
    let dir = env.work().to_str().unwrap().to_owned();
    for (path, why) in [
        ("missing/out.txt", "the directory `missing` does not exist"),
        (dir.as_str(), "is a directory; tj writes a rendition only to a file"),
    ] {
        for via_env in [false, true] {
            let mut args = vec!["run", "--agent"];
            if !via_env {
                args.extend(["--emit", path]);
            }
            args.extend(["--", "sh", "-c", "echo ran; exit 3"]);
            let mut cmd = env.cmd(&args);
            if via_env {
                cmd.env("TJ_EMIT", path);
            }
            let out = env.run_cmd(cmd, b"");
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{path}: {err}");
            assert!(stdout(&out).contains("ran"), "{path}: {}", stdout(&out));
            assert!(err.starts_with(&format!("tj: warning: --emit {path}: ")), "{path}: {err}");
            assert!(err.contains(why), "{path}: {err}");
            assert!(err.trim_end().ends_with("the rendition goes to stdout"), "{path}: {err}");
            assert_eq!(err.lines().count(), 1, "{path}: {err}");
        }
    }
    assert!(!env.work().join("missing").exists());
}

/// The side channel's variables never keep the command from running: an empty one is unset
/// (`export TJ_EMIT=` to switch it off), a malformed one is one warning and ignored.
#[test]
fn empty_or_malformed_side_channel_variables_still_run_the_command() {
    let env = TestEnv::new();
    for (name, value, warning) in [
        ("TJ_EMIT", "", None),
        ("TJ_EMIT_FD", "", None),
        ("TJ_EMIT_FD", "three", Some("TJ_EMIT_FD=`three` is not a file descriptor number")),
        ("TJ_EMIT_FD", "-1", Some("TJ_EMIT_FD=`-1` is not a file descriptor number")),
        ("TJ_EMIT_FORMAT", "", None),
        ("TJ_EMIT_FORMAT", "xml", Some("TJ_EMIT_FORMAT=`xml` is not a format")),
    ] {
        let mut cmd = env.cmd(&["run", "--agent", "--", "sh", "-c", "echo ran; exit 3"]);
        cmd.env(name, value);
        let out = env.run_cmd(cmd, b"");
        let what = format!("{name}={value:?}");
        assert_eq!(out.status.code(), Some(3), "{what}: {}", stderr(&out));
        // No side channel: the rendition is on stdout.
        assert!(stdout(&out).contains("ran"), "{what}: {}", stdout(&out));
        match warning {
            Some(warning) => assert!(stderr(&out).contains(warning), "{what}: {}", stderr(&out)),
            None => assert_eq!(stderr(&out), "", "{what}"),
        }
    }
    // A valid one still works, in either case, and a flag wins over it.
    let side = env.work().join("side.json");
    let mut cmd = env.cmd(&["run", "--agent", "--", "sh", "-c", "echo ran"]);
    cmd.env("TJ_EMIT", &side).env("TJ_EMIT_FORMAT", "JSON");
    let out = env.run_cmd(cmd, b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    assert!(json["inlineText"].as_str().unwrap().contains("ran"), "{json}");
    let mut cmd = env.cmd(&["run", "--agent", "--emit-format", "text", "--", "echo", "flag"]);
    cmd.env("TJ_EMIT", &side).env("TJ_EMIT_FORMAT", "json");
    assert!(env.run_cmd(cmd, b"").status.success());
    assert!(std::fs::read_to_string(&side).unwrap().starts_with("flag"));
}
