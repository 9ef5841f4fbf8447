//! A repository nobody vetted, through the binary: its `.tokenjuice/rules` holds a FIFO, a
//! symlink to `/dev/zero`, a symlink to `/`, a pattern that backtracks catastrophically and a
//! compile bomb (issue 9, defects 5 and 6). tj must finish about as fast as the command,
//! deliver the original, and say what it skipped once per file without quoting any of it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::*;

/// Something each hostile rule file holds that must never reach a warning.
const SECRET: &str = "SECRET-VALUE-4242";

/// A pattern that backtracks catastrophically on any line of 25 characters or more without
/// a `!` (a lookahead inside a nested repetition keeps `fancy-regex` from delegating it).
const REDOS: &str = r"^((?=[^!])[^!]+)+!$";

/// A rule matching `cargo test` whose skip pattern backtracks catastrophically (its priority
/// outranks the builtin `tests/cargo-test`, the bomb's outranks it).
fn redos_rule() -> String {
    format!(
        r#"{{"id":"hostile/redos","family":"{SECRET}\u001b]0;PWNED\u0007","priority":5,
          "match":{{"argv0":["cargo"],"argvIncludes":[["test"]]}},
          "filters":{{"skipPatterns":["{}"]}},
          "description":"{SECRET}"}}"#,
        REDOS.replace('\\', "\\\\")
    )
}

/// A 43 KB rule of `[a-z]{1,65535}N` patterns (3 MB of NFA each), matching `cargo test`.
fn bomb_rule() -> String {
    let patterns = vec![r#""[a-z]{1,65535}N""#; 2800].join(",");
    format!(
        r#"{{"id":"hostile/bomb","family":"{SECRET}","priority":9,
          "match":{{"argv0":["cargo"],"argvIncludes":[["test"]]}},
          "filters":{{"skipPatterns":[{patterns}]}}}}"#
    )
}

/// Plants the hostile rules under `work/.tokenjuice/rules`.
fn plant(env: &TestEnv) -> PathBuf {
    use std::os::unix::fs::symlink;
    let rules = env.work().join(".tokenjuice/rules");
    std::fs::create_dir_all(&rules).unwrap();
    nix::unistd::mkfifo(&rules.join("fifo.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    symlink("/dev/zero", rules.join("zero.json")).unwrap();
    symlink("/", rules.join("slash")).unwrap();
    env.write("work/.tokenjuice/rules/redos.json", &redos_rule());
    let bomb = bomb_rule();
    assert!(bomb.len() > 43_000);
    env.write("work/.tokenjuice/rules/bomb.json", &bomb);
    rules
}

/// The warnings on stderr: one per bad file, naming it, quoting nothing it holds.
fn assert_one_warning_per_bad_file(stderr: &str) {
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.starts_with("tj: warning:")).collect();
    let expected = [
        ("fifo.json", "is not a regular file (a FIFO)"),
        ("zero.json", "leads outside the repository"),
        ("slash`", "leads outside the repository"),
        ("hostile/bomb", "over tj's compile limit"),
        ("hostile/redos", "was given up"),
    ];
    for (name, what) in expected {
        let hits: Vec<&&str> = warnings.iter().filter(|w| w.contains(name)).collect();
        assert_eq!(hits.len(), 1, "{name}: {stderr}");
        assert!(hits[0].contains(what), "{name}: {stderr}");
    }
    assert_eq!(warnings.len(), expected.len(), "{stderr}");
    for leak in [SECRET, "PWNED", "\u{1b}", "65535", "(?="] {
        assert!(!stderr.contains(leak), "stderr quotes {leak:?}: {stderr}");
    }
}

/// `cmd` with what cargo needs from the real environment (TestEnv clears it and moves HOME).
fn with_cargo_env(mut cmd: Command, env: &TestEnv) -> Command {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    for (var, default) in
        [("CARGO_HOME", home.join(".cargo")), ("RUSTUP_HOME", home.join(".rustup"))]
    {
        cmd.env(var, std::env::var_os(var).unwrap_or(default.into_os_string()));
    }
    if let Some(toolchain) = std::env::var_os("RUSTUP_TOOLCHAIN") {
        cmd.env("RUSTUP_TOOLCHAIN", toolchain);
    }
    cmd.env("CARGO_TARGET_DIR", env.root.join("target")).env("CARGO_TERM_COLOR", "never");
    cmd
}

/// A crate with no dependencies and one failing test, in `work/` (already a repository).
/// The test prints 40 lines that each make [`REDOS`] hit its step limit, so the run's
/// backtracking budget runs out however fast the machine is.
fn failing_crate(env: &TestEnv) {
    env.write(
        "work/Cargo.toml",
        "[package]\nname = \"hostile\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    env.write(
        "work/src/lib.rs",
        "#[cfg(test)]\nmod tests {\n    #[test]\n    fn fails() {\n        for i in 0..40 {\n            println!(\"progress line {i} long enough to backtrack on\");\n        }\n        panic!(\"HOSTILE-SIGNAL: the failing test's message\");\n    }\n}\n",
    );
}

/// The `durationMs` the run stored for its command.
fn stored_duration(data: &Path) -> Duration {
    for entry in std::fs::read_dir(data.join("spill")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            let meta: serde_json::Value = serde_json::from_str(&text).unwrap();
            if let Some(ms) = meta["durationMs"].as_u64() {
                return Duration::from_millis(ms);
            }
        }
    }
    panic!("no metadata with durationMs under {}", data.display());
}

fn cargo_is_available() -> bool {
    Command::new("cargo").arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn a_hostile_repository_costs_nothing_and_the_agent_gets_the_original() {
    if !cargo_is_available() {
        eprintln!("skipped: no cargo on PATH");
        return;
    }
    let env = TestEnv::new();
    failing_crate(&env);
    // Build first, without tj and without the rules, so the timed run is the test alone.
    let mut build = with_cargo_env(Command::new("cargo"), &env);
    build
        .args(["test", "--offline", "--no-run", "-q"])
        .env("HOME", env.root.join("home"))
        .current_dir(env.work());
    assert!(build.status().unwrap().success(), "the test crate does not build");
    plant(&env);

    let cmd =
        with_cargo_env(env.cmd(&["run", "--agent", "--", "cargo", "test", "--offline"]), &env);
    let started = Instant::now();
    let out = run_within(cmd, b"", Duration::from_secs(120));
    let wall = started.elapsed();
    let text = stdout(&out);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(101), "{text}\n{err}");
    // The original, not a reduction: the panic and cargo's own lines are all there.
    assert!(text.contains("HOSTILE-SIGNAL: the failing test's message"), "{text}");
    assert!(text.contains("test tests::fails ... FAILED"), "{text}");
    assert!(text.contains("running 1 test"), "{text}");
    assert!(!text.contains("omitted"), "{text}");
    assert_one_warning_per_bad_file(&err);
    let child = stored_duration(&env.data());
    assert!(
        wall < child + Duration::from_secs(2),
        "tj took {wall:?} for a command that ran {child:?}"
    );
}

#[test]
fn a_lookaround_rule_over_a_megabyte_of_lines_gives_the_original_fast() {
    let env = TestEnv::new();
    env.write("work/.tokenjuice/rules/redos.json", &redos_rule());
    let mut raw = String::new();
    let mut i = 0;
    while raw.len() < 1 << 20 {
        raw.push_str(&format!("test module_{}::tests::case_{i:05} ... ok\n", i % 17));
        i += 1;
    }
    let cmd = env.cmd(&["reduce", "--exit-code", "0", "--", "cargo", "test"]);
    // A hang guard, not a benchmark: before the budget this took over 60 s.
    let out = run_within(cmd, raw.as_bytes(), Duration::from_secs(30));
    assert!(out.status.success());
    assert_eq!(stdout(&out).trim_end(), raw.trim_end(), "not the original");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("rule `hostile/redos` was given up"), "{err}");
    assert!(!err.contains(SECRET) && !err.contains('\u{1b}'), "{err}");
}

#[test]
fn a_lookaround_evidence_rule_over_a_streamed_output_is_given_up_and_errors_still_kept() {
    // Past 6 MiB the output is reduced a chunk at a time (reduce::stream), under the same
    // budget: the hostile rule's patterns stop, the built-in classifier keeps the error.
    let env = TestEnv::new();
    let rule = format!(
        r#"{{"id":"hostile/stream","family":"x","priority":5,
          "match":{{"argv0":["cargo"],"argvIncludes":[["test"]]}},
          "evidence":["{}"]}}"#,
        REDOS.replace('\\', "\\\\")
    );
    env.write("work/.tokenjuice/rules/stream.json", &rule);
    let mut raw = String::new();
    let mut i = 0;
    while raw.len() < 7 << 20 {
        raw.push_str(&format!("test module_{}::tests::case_{i:06} ... ok\n", i % 17));
        if i == 90_000 {
            raw.push_str("error: STREAM-MIDDLE-SIGNAL at src/lib.rs:10:5\n");
        }
        i += 1;
    }
    let cmd = env.cmd(&["reduce", "--exit-code", "101", "--", "cargo", "test"]);
    let out = run_within(cmd, raw.as_bytes(), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("error: STREAM-MIDDLE-SIGNAL at src/lib.rs:10:5"), "signal lost");
    assert!(text.len() < 64 << 10, "the rendition is bounded: {} bytes", text.len());
    let err = stderr(&out);
    assert!(err.contains("rule `hostile/stream` was given up"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
