//! `tj reduce`, `tj reduce-json` and `tj expand` through the binary.

use crate::util::*;

fn artifact_id(text: &str) -> String {
    let at = text.rfind("tj expand ").expect("the notice names the artifact");
    text[at + 10..].split_whitespace().next().unwrap().to_owned()
}

#[test]
fn reduce_keeps_failures_stores_the_original_privately_and_expand_brings_it_back() {
    let env = TestEnv::new();
    // The failing test printed a long log before it panicked: the window cuts its middle
    // (passing tests, being noise, go silently).
    let log: String = (0..150).map(|i| format!("setup step {i}: seeded table t{i}\n")).collect();
    let raw = cargo_test_output(400).replace(
        "---- module::tests::broken stdout ----\n\n",
        &format!("---- module::tests::broken stdout ----\n{log}\n"),
    );
    assert!(raw.contains("setup step 149"));
    let out = env.run(&["reduce", "--exit-code", "101", "--", "cargo", "test"], raw.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // The caller passed the exit code in: no `[tj] exit` line, the facts lead.
    assert!(text.starts_with("[tj] 1 failed, 400 passed\n"), "{text}");
    for keep in [
        "test module::tests::broken ... FAILED",
        "thread 'module::tests::broken' panicked at src/lib.rs:10:5:",
        "  left: 1",
        " right: 2",
        "test result: FAILED. 400 passed; 1 failed",
        "error: test failed, to rerun pass `--lib`",
    ] {
        assert!(text.contains(keep), "missing {keep:?} in\n{text}");
    }
    assert!(!text.contains("case_0200 ... ok"));
    assert!(text.len() < raw.len() / 3);
    assert_eq!(stderr(&out), "");

    let id = artifact_id(&text);
    let spill = env.data().join("spill").join(format!("{id}.log"));
    assert_eq!(std::fs::read(&spill).unwrap(), raw.as_bytes());
    assert!(is_private(&spill, 0o600));
    assert!(is_private(&env.data().join("spill"), 0o700));

    let back = env.run(&["expand", &id, "--raw"], b"");
    assert_eq!(back.stdout, raw.as_bytes());

    // Every marker's range brings back exactly the lines it stands for.
    let lines: Vec<&str> = raw.lines().collect();
    let marker = text
        .lines()
        .find(|l| l.starts_with("… ") && l.contains(" omitted (L") && l.contains('–'))
        .unwrap();
    let range = marker.split("(L").nth(1).unwrap().split(')').next().unwrap();
    let (a, b) = range.split_once('–').unwrap();
    let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
    let count: usize = marker.trim_start_matches("… ").split(' ').next().unwrap().parse().unwrap();
    assert_eq!(count, b - a + 1);
    let part = env.run(&["expand", &id, "--lines", &format!("{a}:{b}")], b"");
    assert_eq!(stdout(&part).trim_end(), lines[a - 1..b].join("\n"));
}

#[test]
fn command_string_selects_the_rule_like_argv_does() {
    let env = TestEnv::new();
    let raw = cargo_test_output(400);
    let a = env.run(
        &["reduce", "--exit-code", "101", "--command", "env RUST_LOG=1 cargo test --lib"],
        raw.as_bytes(),
    );
    let b =
        env.run(&["reduce", "--exit-code", "101", "--", "cargo", "test", "--lib"], raw.as_bytes());
    assert_eq!(stdout(&a), stdout(&b));
}

#[test]
fn raw_flag_and_env_give_the_whole_original_ansi_stripped() {
    let env = TestEnv::new();
    let raw = format!("\x1b[32m{}\x1b[0m", cargo_test_output(100));
    let out = env.run(&["reduce", "--raw", "--", "cargo", "test"], raw.as_bytes());
    let text = stdout(&out);
    assert!(text.contains("case_0050 ... ok"));
    assert!(!text.contains('\x1b'));
    let mut cmd = env.cmd(&["reduce", "--", "cargo", "test"]);
    cmd.env("TJ_RAW", "1");
    assert_eq!(stdout(&env.run_cmd(cmd, raw.as_bytes())), text);
}

#[test]
fn unwritable_data_dir_fails_open_with_one_warning() {
    let env = TestEnv::new();
    let blocker = env.write("blocker", "a file where a directory should be");
    let mut cmd = env.cmd(&["reduce", "--", "cargo", "test"]);
    cmd.env("TJ_DATA_DIR", blocker.join("sub"));
    let raw = cargo_test_output(400);
    let out = env.run_cmd(cmd, raw.as_bytes());
    assert!(out.status.success());
    // Nothing could be stored, so nothing was dropped.
    assert!(stdout(&out).contains("case_0200 ... ok"));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("tj: warning: could not create"), "{err}");
    assert!(err.contains("the rendition is the whole original"));
}

#[test]
fn invalid_utf8_and_binary_input_never_fail() {
    let env = TestEnv::new();
    let mut raw = b"header\n\xff\xfe\x00binary\x1b[31m\n".to_vec();
    raw.extend(std::iter::repeat_n(b'x', 5000));
    let out = env.run(&["reduce"], &raw);
    assert!(out.status.success());
    assert!(stdout(&out).contains("header"));
    // Two invalid bytes: one `?` each, never more bytes than the input (reduce::binary).
    assert!(stdout(&out).contains("??"), "{}", stdout(&out));
}

#[test]
fn unreadable_file_is_a_clear_error() {
    let env = TestEnv::new();
    let out = env.run(&["reduce", "/nonexistent/output.log"], b"");
    assert_eq!(out.status.code(), Some(125));
    assert!(
        stderr(&out).starts_with("tj: could not read `/nonexistent/output.log`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn reduce_json_speaks_the_tokenjuice_protocol() {
    let env = TestEnv::new();
    let raw = cargo_test_output(400);
    let request = serde_json::json!({"toolName": "exec", "command": "cargo test", "combinedText": raw, "exitCode": 101});
    let out = env.run(&["reduce-json"], request.to_string().as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let inline = v["inlineText"].as_str().unwrap();
    assert!(inline.contains("test module::tests::broken ... FAILED"));
    assert!(
        v["stats"]["rawChars"].as_u64().unwrap() > v["stats"]["reducedChars"].as_u64().unwrap()
    );
    assert_eq!(v["classification"]["matchedReducer"], "tests/cargo-test");
    assert_eq!(v["exitCode"], 101);
    assert_eq!(v["reduced"], true);
    assert_eq!(v["lossless"], false);
    assert!(v["rawRef"]["id"].as_str().unwrap().len() == 12);
    assert!(v["tokens"]["raw"].as_u64().unwrap() > v["tokens"]["reduced"].as_u64().unwrap());

    // The wrapped form, with stdout and stderr.
    let request = serde_json::json!({"input": {"toolName": "exec", "argv": ["cargo", "test"], "stdout": raw, "stderr": "warning: x"}, "options": {}});
    let out = env.run(&["reduce-json"], request.to_string().as_bytes());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["inlineText"].as_str().unwrap().contains("warning: x"));
}

#[test]
fn reduce_json_gives_the_original_back_byte_for_byte_when_nothing_is_adopted() {
    let env = TestEnv::new();
    // Too small to save anything: the gate declines. Colours, a CR redraw and no final
    // newline must come back as they went in, with no `[tj] exit` line added.
    let raw = "\u{1b}[31merror\u{1b}[0m: build failed\rprogress 50%\rdone\n  at src/x.rs:3";
    let request = serde_json::json!({"toolName": "exec", "command": "make", "combinedText": raw, "exitCode": 2});
    let out = env.run(&["reduce-json"], request.to_string().as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["reduced"], false, "{v}");
    assert_eq!(v["inlineText"], raw, "{v}");
    assert_eq!(v["stats"]["reducedChars"], raw.chars().count(), "{v}");
    assert_eq!(v["exitCode"], 2);

    // Asking for the whole output rendered (`raw`) still gets it rendered.
    let request = serde_json::json!({"input": {"toolName": "exec", "command": "make", "combinedText": raw, "exitCode": 2}, "options": {"raw": true}});
    let out = env.run(&["reduce-json"], request.to_string().as_bytes());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!v["inlineText"].as_str().unwrap().contains('\u{1b}'), "{v}");
}

#[test]
fn reduce_json_bad_input_is_a_json_error_and_non_zero() {
    let env = TestEnv::new();
    for bad in [&b"{not json"[..], b"[]", b"{\"toolName\": 3}", b""] {
        let out = env.run(&["reduce-json"], bad);
        assert_eq!(out.status.code(), Some(1), "{:?}", String::from_utf8_lossy(bad));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()));
    }
}

#[test]
fn expand_unknown_id_is_a_clear_error() {
    let env = TestEnv::new();
    let out = env.run(&["expand", "abcdef"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no artifact `abcdef`"), "{}", stderr(&out));
}

#[test]
fn ls_lists_what_was_stored_and_expand_reduced_and_grep_find_it() {
    let env = TestEnv::new();
    assert_eq!(stdout(&env.run(&["ls"], b"")).trim(), "no artifacts stored yet");
    let raw = cargo_test_output(400);
    let text =
        stdout(&env.run(&["reduce", "--exit-code", "101", "--", "cargo", "test"], raw.as_bytes()));
    let id = artifact_id(&text);
    let ls = stdout(&env.run(&["ls"], b""));
    assert!(ls.starts_with(&id), "{ls}");
    assert!(ls.contains("exit 101") && ls.contains("cargo test"), "{ls}");
    let json: serde_json::Value =
        serde_json::from_slice(&env.run(&["ls", "--format", "json"], b"").stdout).unwrap();
    assert_eq!(json[0]["id"], id.as_str());
    assert_eq!(json[0]["rule"], "tests/cargo-test");
    assert_eq!(json[0]["reduced"], true);

    assert_eq!(stdout(&env.run(&["expand", &id, "--reduced"], b"")).trim_end(), text.trim_end());
    let grep = stdout(&env.run(&["expand", &id, "--grep", "case_020[0-2]"], b""));
    let n = raw.lines().position(|l| l.contains("case_0200")).unwrap() + 1;
    assert_eq!(grep.lines().count(), 3, "{grep}");
    assert!(grep.starts_with(&format!("{n}:test module::tests::case_0200 ... ok")), "{grep}");
    let none = env.run(&["expand", &id, "--grep", "no such line"], b"");
    assert_eq!(none.status.code(), Some(1));
}

#[test]
fn a_repeated_output_in_one_session_becomes_a_stub_and_the_ledger_counts_both() {
    let env = TestEnv::new();
    let raw = cargo_test_output(400);
    let run = || {
        let mut cmd = env.cmd(&["reduce", "--exit-code", "101", "--", "cargo", "test"]);
        cmd.env("TJ_SESSION", "agent-1");
        stdout(&env.run_cmd(cmd, raw.as_bytes()))
    };
    let first = run();
    assert!(first.contains("test module::tests::broken ... FAILED"));
    let second = run();
    let id = artifact_id(&first);
    assert_eq!(second.lines().count(), 1, "{second}");
    assert!(second.starts_with("[tj] same output as "), "{second}");
    assert!(second.contains(&format!("tj expand {id} --reduced")), "{second}");
    // The stub names what it stands for, and that is still there in full.
    assert_eq!(stdout(&env.run(&["expand", &id, "--reduced"], b"")).trim_end(), first.trim_end());
    // Another session sees the whole rendition.
    let mut cmd = env.cmd(&["reduce", "--exit-code", "101", "--", "cargo", "test"]);
    cmd.env("TJ_SESSION", "agent-2");
    assert_eq!(stdout(&env.run_cmd(cmd, raw.as_bytes())), first);
    let ledger = std::fs::read_to_string(env.data().join("ledger.jsonl")).unwrap();
    let entries: Vec<serde_json::Value> =
        ledger.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[1]["deduped"], true);
    assert_eq!(entries[0]["rule"], "tests/cargo-test");
    assert!(entries[0]["tokens"][0].as_u64().unwrap() > entries[0]["tokens"][1].as_u64().unwrap());
}

/// Issue 14: secrets in a rendition become markers naming their kind; the line around each
/// stays, the stored original keeps them (`tj expand`), and `--no-redact` or `"redact":
/// false` leave them. The token is assembled here so that no whole one sits in the source.
#[test]
fn secrets_in_a_rendition_are_redacted_and_the_original_keeps_them() {
    let env = TestEnv::new();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let failing = format!("error: push to https://github.com rejected with token {token}");
    let raw = format!("step 1\n{failing}\npassword=hunter2-Secret9\ndone\n");
    let out = env.run(&["reduce", "--exit-code", "1", "--", "git", "push"], raw.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains(&token) && !text.contains("hunter2-Secret9"), "{text}");
    assert!(
        text.contains(
            "error: push to https://github.com rejected with token [tj: redacted github-token]"
        ),
        "{text}"
    );
    assert!(text.contains("password=[tj: redacted password]"), "{text}");

    // The stored original is the user's own: byte for byte, and so `tj expand` gives it.
    let stored: Vec<String> = std::fs::read_dir(env.data().join("spill"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter_map(|name| name.strip_suffix(".log").map(str::to_owned))
        .collect();
    assert_eq!(stored.len(), 1, "{stored:?}");
    let back = env.run(&["expand", &stored[0], "--raw"], b"");
    assert_eq!(back.stdout, raw.as_bytes());

    let kept = env
        .run(&["reduce", "--no-redact", "--exit-code", "1", "--", "git", "push"], raw.as_bytes());
    assert!(stdout(&kept).contains(&token), "{}", stdout(&kept));

    env.write("config/config.json", r#"{"redact": false}"#);
    let kept = env.run(&["reduce", "--exit-code", "1", "--", "git", "push"], raw.as_bytes());
    assert!(stdout(&kept).contains("password=hunter2-Secret9"), "{}", stdout(&kept));
    assert_eq!(stderr(&kept), "");

    env.write("config/config.json", r#"{"redact": "no"}"#);
    let bad = env.run(&["reduce", "--exit-code", "1", "--", "git", "push"], raw.as_bytes());
    assert!(!stdout(&bad).contains(&token), "{}", stdout(&bad));
    assert!(stderr(&bad).contains("redact must be true or false"), "{}", stderr(&bad));
}

/// `tj run` redacts what the agent gets, and never what the person watching sees.
#[test]
fn tj_run_redacts_the_agent_s_rendition() {
    let env = TestEnv::new();
    let out = env
        .run(&["run", "--agent", "--", "sh", "-c", "echo DB_PASSWORD=s3cr3t-Value; exit 3"], b"");
    assert_eq!(out.status.code(), Some(3));
    let text = stdout(&out);
    assert!(text.contains("DB_PASSWORD=[tj: redacted password]"), "{text}");
    assert!(!text.contains("s3cr3t-Value"), "{text}");
    let kept = env.run(
        &["run", "--agent", "--no-redact", "--", "sh", "-c", "echo DB_PASSWORD=s3cr3t-Value"],
        b"",
    );
    assert!(stdout(&kept).contains("DB_PASSWORD=s3cr3t-Value"), "{}", stdout(&kept));
}

#[test]
fn what_goes_out_whole_and_what_expand_prints_is_redacted_too() {
    let env = TestEnv::new();
    let secret = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    let marker = "AWS_SECRET_ACCESS_KEY=[tj: redacted";

    // reduce-json gives the harness its own text back when nothing is adopted: redacted.
    let text = format!("short output\n{secret}\n");
    let request = serde_json::json!({"toolName": "exec", "command": "env", "combinedText": text});
    let out = env.run(&["reduce-json"], request.to_string().as_bytes());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let inline = v["inlineText"].as_str().unwrap();
    assert!(inline.starts_with("short output\n") && inline.contains(marker), "{inline}");
    assert!(!inline.contains("wJalrXUtnFEMI"), "{inline}");

    // `tj run --raw`: the whole original goes out, redacted.
    let script = format!("echo '{secret}'; exit 2");
    let out = env.run(&["run", "--agent", "--raw", "--", "sh", "-c", &script], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).contains(marker), "{}", stdout(&out));
    assert!(!stdout(&out).contains("wJalrXUtnFEMI"), "{}", stdout(&out));

    // `tj expand` prints the original's lines redacted; --no-redact and --raw give it as is.
    let out = env.run(&["reduce", "--command", "env"], format!("{secret}\n").as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let (id, _) = {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("{secret}\n").as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        (hex[..12].to_owned(), hex)
    };
    let shown = stdout(&env.run(&["expand", &id], b""));
    assert!(shown.contains(marker) && !shown.contains("wJalrXUtnFEMI"), "{shown}");
    let grep = stdout(&env.run(&["expand", &id, "--grep", "AWS"], b""));
    assert!(grep.starts_with("1:") && grep.contains(marker), "{grep}");
    assert_eq!(stdout(&env.run(&["expand", &id, "--no-redact"], b"")), format!("{secret}\n"));
    assert_eq!(env.run(&["expand", &id, "--raw"], b"").stdout, format!("{secret}\n").as_bytes());
    env.write("config/config.json", r#"{"redact": false}"#);
    assert_eq!(stdout(&env.run(&["expand", &id], b"")), format!("{secret}\n"));
}
