//! What tj prints about an output and its original, through the binary (issues 9 and 10):
//! escaping of stored data, lenient input, big and binary outputs, full disks, `tj expand`'s
//! ranges and `tj run`'s argument parsing.

use crate::util::*;

/// `sh -c script` in `env`'s working directory, with the environment `TestEnv::cmd` gives tj.
fn shell(env: &TestEnv, script: &str) -> std::process::Command {
    let tj = env.cmd(&[]);
    let mut sh = std::process::Command::new("sh");
    sh.env_clear().current_dir(env.work()).args(["-c", script]);
    for (key, value) in tj.get_envs() {
        if let Some(value) = value {
            sh.env(key, value);
        }
    }
    sh
}

#[test]
fn ls_escapes_control_characters_of_a_stored_command() {
    let env = TestEnv::new();
    let hostile = "\u{1b}]0;PWNED\u{7}\u{1b}[2J";
    let out = env.run(&["reduce", "--command", hostile], b"some output\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["ls"], b"");
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
    assert!(text.contains(r"\e]0;PWNED\x07\e[2J"), "{text}");
}

#[test]
fn expand_errors_escape_the_id_they_quote() {
    let env = TestEnv::new();
    let out = env.run(&["expand", "\u{1b}[2J\u{9b}31m"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains('\u{1b}') && !err.contains('\u{9b}'), "{err:?}");
    assert!(err.contains(r"\e[2J\u{9b}31m"), "{err}");
}

#[test]
fn ls_counts_corrupt_entries_instead_of_calling_the_store_empty() {
    let env = TestEnv::new();
    env.write("data/spill/0123456789ab.json", "{ not json");
    env.write("data/spill/ba9876543210.json", "");
    let out = env.run(&["ls"], b"");
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("2 corrupt entries"), "{text}");
    assert!(!text.contains("no artifacts stored yet"), "{text}");
    assert!(stderr(&out).contains("2 artifacts have unreadable metadata"), "{}", stderr(&out));
}

#[test]
fn reduce_json_passes_nul_and_lone_surrogates_through() {
    let env = TestEnv::new();
    let request = br#"{"toolName":"exec","command":"printf x","combinedText":"before\u0000after \ud83d cut\nerror: SIGNAL"}"#;
    let out = env.run(&["reduce-json"], request);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = json["inlineText"].as_str().unwrap();
    assert!(text.contains("error: SIGNAL"), "{text}");
    assert!(text.contains("\u{fffd} cut"), "{text}");
    assert!(text.contains("before") && text.contains("after"), "{text}");
}

#[test]
fn run_in_a_deleted_working_directory_still_runs_the_command() {
    let env = TestEnv::new();
    let tj = env!("CARGO_BIN_EXE_tj");
    // The shell enters a directory, removes it, then execs tj there.
    let script = format!(
        "mkdir gone && cd gone && rmdir ../gone && exec {tj} run --agent --no-pty -- sh -c 'echo ran here; exit 3'"
    );
    let out = env.run_cmd(shell(&env, &script), b"");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stdout(&out).contains("ran here"), "{}", stdout(&out));
}

#[test]
fn run_takes_the_command_without_a_double_dash() {
    let env = TestEnv::new();
    // tj's own flags come first; everything from the command on is the command's, `--`
    // included.
    let out = env.run(&["run", "--agent", "--no-pty", "printf", "%s|", "a", "--", "--agent"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim_end(), "a|--|--agent|");
    // The explicit form keeps working, and an unknown option before the command is refused.
    let out = env.run(&["run", "--agent", "--no-pty", "--", "printf", "%s|", "b"], b"");
    assert_eq!(stdout(&out).trim_end(), "b|");
    let out = env.run(&["run", "--bogus", "printf", "x"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--bogus"), "{}", stderr(&out));
}
