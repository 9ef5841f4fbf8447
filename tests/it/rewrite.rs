//! `tj rewrite` (issue 11): the rewrite table (`tests/rewrite/table.txt`, kept out of
//! `tests/fixtures`, where every file is a JSON output fixture), the command line, and the
//! equivalence of every rewritten line with its original in real bash and zsh.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tj::rewrite::lex::{self, Kind};
use tj::rewrite::{Context, rewrite};

use crate::util::*;

const TABLE: &str = include_str!("../rewrite/table.txt");
const FAKE_TJ: &str = "/opt/tj/bin/tj";

/// One line of the table.
struct Case {
    /// Its line number in the table, for messages.
    at: usize,
    line: String,
    /// The rewritten line with `▸` at the insert, or `Err(words of the reason)`.
    expected: Result<String, String>,
}

fn table() -> Vec<Case> {
    let unescape = |s: &str| s.replace('␤', "\n").replace('⇥', "\t").replace('␍', "\r");
    let mut cases = Vec::new();
    for (i, row) in TABLE.lines().enumerate() {
        let Some((line, expected)) = row.split_once('\t') else { continue };
        let expected = match expected.strip_prefix("no: ") {
            Some(why) => Err(why.to_owned()),
            None => Ok(unescape(expected)),
        };
        cases.push(Case { at: i + 1, line: unescape(line), expected });
    }
    cases
}

/// An environment with an empty config dir (no user rules, no exclusions) and no working
/// directory (no project rules), as a hook for a fresh user would see it.
fn clean_env(config: &Path) -> tj::env::Env {
    let vars = [(OsString::from(tj::env::TJ_CONFIG_DIR), config.as_os_str().to_owned())];
    tj::env::Env::from_vars(vars, None)
}

#[test]
fn every_table_line_is_decided_as_the_table_says() {
    let scratch = TestEnv::new();
    let env = clean_env(&scratch.root.join("config"));
    let ctx = Context { env: &env, tj: Path::new(FAKE_TJ), host: None, exclude: &[] };
    let cases = table();
    let eligible = cases.iter().filter(|c| c.expected.is_ok()).count();
    assert!(cases.len() >= 100, "the table has only {} cases", cases.len());
    assert!(eligible >= 50 && cases.len() - eligible >= 50, "{eligible} of {}", cases.len());
    let insert = format!("{FAKE_TJ} run --agent -- ");
    let mut failures = Vec::new();
    for case in &cases {
        let got = rewrite(&case.line, &ctx);
        let ok = match (&case.expected, &got) {
            (Ok(marked), Ok(r)) => {
                r.line == marked.replacen('▸', &insert, 1)
                    && rewrite(&r.line, &ctx).is_err_and(|e| e.0.contains("already"))
            }
            (Err(words), Err(why)) => why.0.contains(words.as_str()),
            _ => false,
        };
        if !ok {
            let got = got.map(|r| r.line.replace(&insert, "▸")).map_err(|e| e.0);
            failures.push(format!(
                "table.txt:{} {:?}\n   want {:?}\n    got {got:?}",
                case.at, case.line, case.expected
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn segments_cover_every_simple_command_of_the_original() {
    let scratch = TestEnv::new();
    let env = clean_env(&scratch.root.join("config"));
    let ctx = Context { env: &env, tj: Path::new(FAKE_TJ), host: None, exclude: &[] };
    for case in table().iter().filter(|c| c.expected.is_ok()) {
        let r = rewrite(&case.line, &ctx).unwrap();
        let tokens = lex::lex(&case.line).unwrap();
        let cds = tokens.iter().filter(|t| t.kind == Kind::Op(lex::Op::AndIf)).count();
        assert_eq!(r.segments.len(), cds + 1, "{:?}", case.line);
        for (i, segment) in r.segments.iter().enumerate() {
            assert!(case.line.contains(&segment.text), "{:?}: {:?}", case.line, segment.text);
            assert!(!segment.text.starts_with(char::is_whitespace), "{:?}", segment.text);
            assert_eq!(
                i < cds,
                segment.words.first().is_some_and(|w| w == "cd"),
                "{:?}",
                case.line
            );
        }
    }
}

#[test]
fn the_command_prints_the_line_or_nothing_and_says_why_when_asked() {
    let env = TestEnv::new();
    let tj = crate::util::tj_bin_str();
    let out = env.run(&["rewrite", "cd app && cargo test"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), format!("cd app && {tj} run --agent -- cargo test\n"));
    assert_eq!(stderr(&out), "");

    let out = env.run(&["rewrite", "--host", "codex", "--", "npm test"], b"");
    assert_eq!(stdout(&out), format!("{tj} run --agent --host codex -- npm test\n"));

    let out = env.run(&["rewrite", "cargo test | grep 'test result'"], b"");
    assert_eq!(
        (out.status.code(), stdout(&out), stderr(&out)),
        (Some(1), String::new(), String::new())
    );
    let out = env.run(&["rewrite", "-v", "cargo test | grep 'test result'"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).starts_with("tj: not rewritten: a pipe `|`"), "{}", stderr(&out));
}

#[test]
fn config_exclusions_apply_and_a_bad_value_is_warned_about_not_fatal() {
    let env = TestEnv::new();
    env.write("config/config.json", r#"{"rewrite": {"exclude": ["cargo test", "make"]}}"#);
    let out = env.run(&["rewrite", "-v", "cargo --locked test --release"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("excluded by rewrite.exclude (`cargo test`)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.run(&["rewrite", "cargo build"], b"").status.code(), Some(0));

    env.write("config/config.json", r#"{"rewrite": {"exclude": "make"}}"#);
    let out = env.run(&["rewrite", "make"], b"");
    assert_eq!(out.status.code(), Some(0), "a bad exclude list excludes nothing");
    assert!(stderr(&out).contains("rewrite.exclude must be a list of strings"), "{}", stderr(&out));
}

#[test]
fn help_says_what_is_rewritten() {
    let env = TestEnv::new();
    let help = stdout(&env.run(&["rewrite", "--help"], b""));
    for words in ["cd DIR &&", "2>&1", "rewrite.exclude", "exit 1", "--host", "run --agent"] {
        assert!(help.contains(words), "--help lacks {words:?}:\n{help}");
    }
}

// ---------------------------------------------------------------------------------------
// Shell equivalence
// ---------------------------------------------------------------------------------------

/// A fake build tool: records its name, argv (NUL-separated), working directory (relative
/// to the run's root) and a few variables; writes a file in its working directory; prints
/// to stdout, then stderr, then stdout; exits with `$EQ_EXIT`.
const FAKE_TOOL: &str = r#"#!/bin/sh
name=${0##*/}
{
  printf '%s\0' "$name" "$@"
  printf 'pwd=%s\0' "${PWD#"$EQ_ROOT"}"
  for v in FOO BAR A B CI RUST_LOG RUST_BACKTRACE; do eval "printf '%s=%s\0' $v \"\${$v-unset}\""; done
  printf '\n'
} >>"$EQ_ROOT/.argv-record"
printf '%s ran with %d arguments\n' "$name" "$#" >"made-by-$name.txt"
echo "$name: first line"
echo "$name: warning: something on stderr" >&2
echo "$name: last line"
exit "${EQ_EXIT:-0}"
"#;

/// What one run of a line left behind.
#[derive(Debug, PartialEq)]
struct Observed {
    status: Option<i32>,
    /// stdout, or stdout and stderr together when they shared one pipe.
    out: Vec<u8>,
    err: Vec<u8>,
    /// Every file and directory under the run's root, with its bytes (directories empty).
    files: BTreeMap<String, Vec<u8>>,
    /// The final working directory, relative to the run's root.
    pwd: String,
}

struct Lab {
    root: PathBuf,
    bin: PathBuf,
    tj_data: PathBuf,
    next: AtomicUsize,
}

impl Lab {
    fn new(env: &TestEnv, tools: &[String]) -> Lab {
        let bin = env.root.join("fakebin");
        std::fs::create_dir_all(&bin).unwrap();
        for tool in tools {
            write_executable(&bin.join(tool), FAKE_TOOL);
        }
        // Every run's `./gradlew` is a hard link to this one: see `write_executable`.
        write_executable(&bin.join(".gradlew"), FAKE_TOOL);
        let root = env.root.canonicalize().unwrap();
        Lab { tj_data: root.join("data"), bin, root, next: AtomicUsize::new(0) }
    }

    /// Runs `line` with `shell` in a fresh directory; `merged` gives stdout and stderr one
    /// pipe, else each its own.
    fn run(&self, shell: &str, line: &str, exit: i32, merged: bool) -> Observed {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let dir = self.root.join(format!("runs/{n}"));
        for sub in ["app", "a b", "sub/dir", "build"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        std::fs::hard_link(self.bin.join(".gradlew"), dir.join("gradlew")).unwrap();
        let pwd_file = self.root.join(format!("runs/{n}.pwd"));
        let script = format!("{line}\ns=$?; pwd >\"$EQ_PWD\"; exit $s");
        let mut cmd = Command::new(shell);
        if shell == "zsh" {
            cmd.arg("-f");
        }
        let path = format!("{}:/usr/bin:/bin", self.bin.display());
        cmd.arg("-c")
            .arg(script)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.root.join("home"))
            .env("LANG", "C.UTF-8")
            .env("TJ_DATA_DIR", &self.tj_data)
            .env("TJ_CONFIG_DIR", self.root.join("config"))
            .env("EQ_ROOT", &dir)
            .env("EQ_EXIT", exit.to_string())
            .env("EQ_PWD", &pwd_file)
            .env("TIMEFORMAT", "")
            .env("TIMEFMT", "")
            .current_dir(&dir);
        let (status, out, err) = if merged { run_merged(cmd) } else { run_separate(cmd) };
        let pwd = std::fs::read_to_string(&pwd_file).unwrap_or_default();
        let pwd = pwd.trim_end().strip_prefix(dir.to_str().unwrap()).unwrap_or("?").to_owned();
        let mut files = BTreeMap::new();
        snapshot(&dir, &dir, &mut files);
        Observed { status: status.code(), out, err, files, pwd }
    }
}

/// Writes an executable through a process of its own (`sh`, then `cat`), so that no
/// process but those two ever has it open for writing. Written from this process, any
/// child another test's thread forks meanwhile would hold it open until that child's exec,
/// and a shell exec'ing the file then fails with ETXTBSY ("text file busy"), which shells
/// do not retry (1 run in 6 of the musl pass here).
fn write_executable(path: &Path, text: &str) {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "cat >\"$1\" && chmod 755 \"$1\"", "sh"]).arg(path);
    let out = run_within(cmd, text.as_bytes(), LIMIT);
    assert!(out.status.success(), "writing {}: {}", path.display(), stderr(&out));
}

fn snapshot(root: &Path, dir: &Path, files: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            files.insert(format!("{rel}/"), Vec::new());
            snapshot(root, &path, files);
        } else {
            files.insert(rel, std::fs::read(&path).unwrap());
        }
    }
}

const LIMIT: Duration = Duration::from_secs(60);

fn run_separate(cmd: Command) -> (ExitStatus, Vec<u8>, Vec<u8>) {
    let out = run_within(cmd, b"", LIMIT);
    (out.status, out.stdout, out.stderr)
}

/// Runs `cmd` with stdout and stderr on one pipe, as harnesses that merge them do.
fn run_merged(mut cmd: Command) -> (ExitStatus, Vec<u8>, Vec<u8>) {
    let (read, write) = nix::unistd::pipe().unwrap();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(write.try_clone().unwrap()))
        .stderr(Stdio::from(write));
    let mut child = spawn_retrying(&mut cmd);
    drop(cmd); // closes our copies of the write end, so the reader sees the end
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::fs::File::from(read), &mut buf);
        buf
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("a shell did not finish within {LIMIT:?}");
        }
        // Polling for a deadline, not synchronising: the exit is what is waited for.
        std::thread::sleep(Duration::from_millis(5));
    };
    (status, reader.join().unwrap(), Vec::new())
}

/// Whether the line sends its stdout to /dev/null (so tj's rendition goes there too).
fn stdout_discarded(line: &str) -> bool {
    lex::lex(line).unwrap().iter().any(|t| {
        matches!(&t.kind, Kind::Redirect(r)
            if r.op == ">" && r.fd.is_none_or(|fd| fd == 1) && r.target_raw == "/dev/null")
    })
}

/// The program the rewrite runs through tj: the first word after the insert.
fn program(rewritten: &str, insert: &str) -> String {
    let at = rewritten.find(insert).unwrap() + insert.len();
    let tokens = lex::lex(&rewritten[at..]).unwrap();
    let Kind::Word(w) = &tokens[0].kind else { panic!("no command word in {rewritten:?}") };
    w.text.rsplit('/').next().unwrap().to_owned()
}

/// Compares one original run with its rewritten run; `merged_original` is what the original
/// printed with stdout and stderr on one pipe. Returns what differs.
fn compare(
    line: &str,
    exit: i32,
    merged: bool,
    orig: &Observed,
    new: &Observed,
    merged_original: &[u8],
) -> Vec<String> {
    let mut diffs = Vec::new();
    if orig.status != new.status {
        diffs.push(format!("exit status {:?} became {:?}", orig.status, new.status));
    }
    if orig.files != new.files {
        diffs.push(format!("files {:?}\n  became {:?}", show(&orig.files), show(&new.files)));
    }
    if orig.pwd != new.pwd {
        diffs.push(format!("final directory {:?} became {:?}", orig.pwd, new.pwd));
    }
    let tool_ran = orig.files.contains_key(".argv-record");
    // `time` reports on the shell's stderr, outside tj, with timings that vary.
    let timed = line.contains("time ");
    let untimed = |bytes: &[u8]| -> Vec<u8> {
        if !timed {
            return bytes.to_vec();
        }
        let text = String::from_utf8_lossy(bytes);
        let kept = text.split_inclusive('\n').filter(|l| {
            let l = l.trim_end();
            !(l.is_empty() || ["real ", "user ", "sys "].iter().any(|p| l.starts_with(p)))
        });
        kept.collect::<String>().into_bytes()
    };
    let (want_out, want_err) = if !tool_ran || stdout_discarded(line) {
        // tj never ran, or its stdout is /dev/null: what reaches the pipes is the child's
        // stderr (given to it directly) and the shell's own output, byte for byte.
        (untimed(&orig.out), untimed(&orig.err))
    } else {
        // The rendition of a small output is the output itself, stdout and stderr together
        // in the order written; a failure is headed `[tj] exit N`.
        let mut want =
            if exit == 0 { Vec::new() } else { format!("[tj] exit {exit}\n").into_bytes() };
        want.extend_from_slice(&untimed(merged_original));
        (want, Vec::new())
    };
    let (new_out, new_err) = (untimed(&new.out), untimed(&new.err));
    if new_out != want_out {
        diffs.push(format!(
            "{} {:?}\n  expected {:?}",
            if merged { "stdout+stderr" } else { "stdout" },
            String::from_utf8_lossy(&new_out),
            String::from_utf8_lossy(&want_out)
        ));
    }
    if new_err != want_err {
        diffs.push(format!(
            "stderr {:?}\n  expected {:?}",
            String::from_utf8_lossy(&new_err),
            String::from_utf8_lossy(&want_err)
        ));
    }
    diffs
}

fn show(files: &BTreeMap<String, Vec<u8>>) -> BTreeMap<&str, String> {
    files.iter().map(|(k, v)| (k.as_str(), String::from_utf8_lossy(v).into_owned())).collect()
}

fn have(shell: &str) -> bool {
    Command::new(shell).arg("-c").arg("exit 0").output().is_ok_and(|o| o.status.success())
}

#[test]
fn rewritten_lines_behave_like_the_originals_in_bash_and_zsh() {
    let env = TestEnv::new();
    let tj = crate::util::tj_bin_str();
    let insert = format!("{tj} run --agent -- ");
    // Every eligible line, rewritten by the binary itself.
    let mut pairs = Vec::new();
    for case in table().into_iter().filter(|c| c.expected.is_ok()) {
        let out = env.run(&["rewrite", "--", &case.line], b"");
        assert_eq!(out.status.code(), Some(0), "{:?}: {}", case.line, stderr(&out));
        let rewritten = stdout(&out).strip_suffix('\n').unwrap().to_owned();
        pairs.push((case.line, rewritten));
    }
    let mut tools: Vec<String> = pairs.iter().map(|(_, r)| program(r, &insert)).collect();
    tools.sort();
    tools.dedup();
    let lab = Lab::new(&env, &tools);

    let mut shells = vec!["bash"];
    if have("zsh") {
        shells.push("zsh");
    } else {
        println!("skipping: zsh is not installed; the equivalence is checked with bash only");
    }
    // Each shell sees each line succeed and fail, once on separate pipes and once on one.
    let mut jobs = Vec::new();
    for (i, shell) in shells.iter().enumerate() {
        for pair in &pairs {
            jobs.push((*shell, pair, 0, i == 1));
            jobs.push((*shell, pair, 3, i == 0));
        }
    }
    let next = AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                while let Some(&(shell, (line, rewritten), exit, merged)) =
                    jobs.get(next.fetch_add(1, Ordering::SeqCst))
                {
                    let orig = lab.run(shell, line, exit, merged);
                    let new = lab.run(shell, rewritten, exit, merged);
                    let merged_original = if merged {
                        orig.out.clone()
                    } else {
                        lab.run(shell, line, exit, true).out
                    };
                    let diffs = compare(line, exit, merged, &orig, &new, &merged_original);
                    if !diffs.is_empty() {
                        let how = if merged { "one pipe" } else { "two pipes" };
                        failures.lock().unwrap().push(format!(
                            "{shell}, exit {exit}, {how}: {line:?}\n  {}",
                            diffs.join("\n  ")
                        ));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} runs differ:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
    assert!(jobs.len() >= 4 * pairs.len() || shells.len() == 1);
}
