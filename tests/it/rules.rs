//! Rule layers and `tj rules` through the binary.

use crate::util::*;

/// A rule in tokenjuice's format, overriding the builtin `tests/cargo-test`.
const OVERRIDE: &str = r#"{
  "id": "tests/cargo-test",
  "family": "test-results",
  "description": "Project override: keep only the summary",
  "match": { "toolNames": ["exec"], "argv0": ["cargo"], "argvIncludes": [["test"]] },
  "transforms": { "stripAnsi": true, "dedupeAdjacent": true, "trimEmptyEdges": true },
  "filters": { "skipPatterns": ["^test .* \\.\\.\\. ok$", "^\\s*Compiling .+"] },
  "summarize": { "head": 2, "tail": 2 },
  "failure": { "preserveOnFailure": true, "head": 2, "tail": 2 },
  "counters": [ { "name": "broken test", "pattern": "\\.\\.\\. FAILED$" } ]
}"#;

#[test]
fn project_tokenjuice_rule_overrides_the_builtin_of_the_same_id() {
    let env = TestEnv::new();
    env.write("work/.tokenjuice/rules/cargo-test.json", OVERRIDE);
    let list = stdout(&env.run(&["rules", "list"], b""));
    let line = list.lines().find(|l| l.starts_with("tests/cargo-test ")).unwrap();
    assert!(line.contains("project"), "{line}");
    assert!(line.contains(".tokenjuice/rules/cargo-test.json"), "{line}");

    let explain = stdout(&env.run(&["rules", "explain", "--", "cargo", "test"], b""));
    assert!(explain.contains("rule:     tests/cargo-test (project layer"), "{explain}");

    let raw = cargo_test_output(400);
    let out = env.run(&["reduce", "--exit-code", "101", "--", "cargo", "test"], raw.as_bytes());
    let text = stdout(&out);
    // The override's counter ran: its fact is in the header.
    assert!(text.starts_with("[tj] 1 broken test\n"), "{text}");
    // Its skip patterns dropped the passing lines; failures are still all there.
    assert!(text.contains("test module::tests::broken ... FAILED"));
    assert!(text.contains("  left: 1"));
    assert_eq!(stderr(&out), "");
}

#[test]
fn malformed_project_rule_is_skipped_with_one_warning_naming_the_file() {
    let env = TestEnv::new();
    env.write("work/.tokenjuice/rules/broken.json", "{ \"id\": \"x/y\", ");
    let raw = cargo_test_output(400);
    let out = env.run(&["reduce", "--exit-code", "101", "--", "cargo", "test"], raw.as_bytes());
    assert!(out.status.success());
    assert!(stdout(&out).contains("test module::tests::broken ... FAILED"));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("could not parse rule")
            && err.contains("broken.json")
            && err.contains("skipped"),
        "{err}"
    );

    let verify = env.run(&["rules", "verify"], b"");
    assert_eq!(verify.status.code(), Some(1));
    assert!(stdout(&verify).contains("broken.json"));
}

#[test]
fn invalid_regex_disables_that_pattern_only() {
    let env = TestEnv::new();
    let rule = OVERRIDE.replace(r#""^\\s*Compiling .+""#, r#""(unclosed""#);
    env.write("work/.tokenjuice/rules/cargo-test.json", &rule);
    let raw = cargo_test_output(400);
    let out = env.run(&["reduce", "--exit-code", "101", "--", "cargo", "test"], raw.as_bytes());
    let text = stdout(&out);
    // The valid skip pattern still works.
    assert!(!text.contains("case_0200 ... ok"), "{text}");
    let err = stderr(&out);
    assert!(err.contains("invalid regex in filters.skipPatterns[1]"), "{err}");
    assert!(err.contains("that pattern is disabled"));
    let verify = env.run(&["rules", "verify"], b"");
    assert_eq!(verify.status.code(), Some(1));
    assert!(stdout(&verify).contains("filters.skipPatterns[1]"));
}

#[test]
fn unknown_keys_warn_but_the_rule_loads() {
    let env = TestEnv::new();
    let rule = OVERRIDE.replace(r#""description""#, r#""futureKnob": 3, "description""#);
    env.write("config/rules/cargo-test.json", &rule);
    let out = env.run(&["rules", "list"], b"");
    assert!(stderr(&out).contains("futureKnob"), "{}", stderr(&out));
    assert!(stdout(&out).lines().any(|l| l.starts_with("tests/cargo-test ") && l.contains("user")));
}

#[test]
fn explain_shows_identity_and_compound_commands() {
    let env = TestEnv::new();
    let out = stdout(&env.run(
        &["rules", "explain", "--command", "sudo -E env X=1 /usr/bin/cargo +nightly test"],
        b"",
    ));
    assert!(out.contains("identity: cargo test"), "{out}");
    let out = stdout(&env.run(&["rules", "explain", "--command", "cargo test | tail"], b""));
    assert!(out.contains("compound"), "{out}");
    assert!(out.contains("rule:     generic/fallback"), "{out}");
}

#[test]
fn builtin_rules_verify_with_their_fixtures() {
    let env = TestEnv::new();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let out = env.run(&["rules", "verify", "--fixtures", fixtures], b"");
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.lines().last().unwrap().starts_with("ok: "), "{text}");
}
