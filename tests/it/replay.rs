//! `tj rules replay` through the binary: originals stored by `tj reduce` and `tj run`,
//! replayed against the current rules, a broken rule and a trimming one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::util::*;

/// The builtin `tests/cargo-test` rule, as shipped.
const CARGO_TEST_RULE: &str = include_str!("../../rules/tests/cargo-test.json");

/// The builtin cargo test rule with `edit` applied to its JSON.
fn cargo_rule_with(edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) -> String {
    let mut rule: serde_json::Value = serde_json::from_str(CARGO_TEST_RULE).unwrap();
    edit(rule.as_object_mut().unwrap());
    serde_json::to_string_pretty(&rule).unwrap()
}

/// The id the rendition's notice names (`tj expand ID`).
fn artifact_id(text: &str) -> String {
    let at = text.rfind("tj expand ").expect("the notice names the artifact");
    text[at + 10..].split_whitespace().next().unwrap().to_owned()
}

/// An environment with three originals stored: a failing cargo test run and a passing one
/// (`tj reduce`), and a failing script run by `tj run`. Returns the failing run's id and
/// its raw output.
fn stored() -> (TestEnv, String, String) {
    let env = TestEnv::new();
    let failing = cargo_test_output(300);
    let file = env.write("work/failing.txt", &failing);
    let out = env.run(
        &["reduce", "--command", "cargo test", "--exit-code", "101", file.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let id = artifact_id(&stdout(&out));
    let passing: String =
        (0..400).map(|i| format!("test module::tests::pass_{i:04} ... ok\n")).collect();
    let passing = format!("running 400 tests\n{passing}\ntest result: ok. 400 passed; 0 failed\n");
    let out = env.run(&["reduce", "--exit-code", "0", "--", "cargo", "test"], passing.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let script =
        "for i in $(seq 1 300); do echo \"step $i of the build\"; done; echo 'error: boom'; exit 3";
    let out = env.run(&["run", "--agent", "--", "sh", "-c", script], b"");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    (env, id, failing)
}

/// `DIR/NAME.json` under the test root, holding `rule`.
fn proposed(env: &TestEnv, dir: &str, rule: &str) -> PathBuf {
    let path = env.write(&format!("{dir}/cargo-test.json"), rule);
    path.parent().unwrap().to_path_buf()
}

fn replay(env: &TestEnv, args: &[&str]) -> std::process::Output {
    let mut all = vec!["rules", "replay"];
    all.extend_from_slice(args);
    env.run(&all, b"")
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

/// The row of `rule` in a JSON report.
fn row<'a>(report: &'a serde_json::Value, rule: &str) -> &'a serde_json::Value {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rule"] == rule)
        .unwrap_or_else(|| panic!("no row for {rule}: {report}"))
}

#[test]
fn replay_with_no_change_reports_nothing_changed_and_nothing_lost() {
    let (env, _, _) = stored();
    // Against the stored renditions: tj run's `[tj] exit 3` line and tj reduce's hidden
    // exit code are both reproduced.
    let out = replay(&env, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    assert!(text.contains("replayed 3 originals"), "{text}");
    let all = text.lines().find(|l| l.starts_with("all ")).unwrap();
    let counts: Vec<&str> = all.split_whitespace().take(5).collect();
    assert_eq!(counts, ["all", "3", "0", "0", "0"], "{text}");
    assert!(text.contains("ok: no artifact loses evidence"), "{text}");

    // An unchanged copy of the selected rule, proposed as a project layer would be.
    let dir = proposed(&env, "same", CARGO_TEST_RULE);
    let out = replay(&env, &["--rules", dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["all"]["replayed"], 3);
    assert_eq!(report["all"]["changed"], 0);
    assert_eq!(report["all"]["evidenceLost"], 0);
    assert_eq!(report["proposedRules"], serde_json::json!(["tests/cargo-test"]));
}

#[test]
fn a_broken_rule_is_reported_as_losing_evidence_naming_rule_artifact_and_line() {
    let (env, id, failing) = stored();
    // Deliberately broken: every cargo test output becomes one line, failures and all.
    let broken = cargo_rule_with(|rule| {
        rule.insert(
            "matchOutput".into(),
            serde_json::json!([{ "pattern": "test result", "message": "tests ran" }]),
        );
    });
    let dir = proposed(&env, "broken", &broken);
    let out = replay(&env, &["--rules", dir.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    // Both cargo runs lose their evidence (the passing one its `test result:` line); the
    // script run by `tj run` selects another rule and loses nothing.
    assert!(text.contains("FAILED: 2 artifacts lose evidence"), "{text}");
    let rule_row = text.lines().find(|l| l.starts_with("tests/cargo-test ")).unwrap();
    let counts: Vec<&str> = rule_row.split_whitespace().take(5).collect();
    assert_eq!(counts, ["tests/cargo-test", "2", "2", "0", "2"], "{text}");
    let fallback = text.lines().find(|l| l.starts_with("generic/fallback ")).unwrap();
    assert_eq!(fallback.split_whitespace().nth(4), Some("0"), "{text}");
    // The failing run's entry names the rule, the command and a line of its original.
    let section = &text[text.find("evidence lost:").expect(&text)..];
    let entry = &section[section.find(&format!("  {id}  ")).expect(section)..];
    let mut lines = entry.lines();
    let head = lines.next().unwrap();
    assert!(head.contains("cargo test") && head.contains("(tests/cargo-test)"), "{head}");
    let body: Vec<&str> = lines.take_while(|l| l.starts_with("    ")).collect();
    assert!(body[0].contains("the evidence invariant rejects"), "{entry}");
    let lost: Vec<&str> = body.iter().filter_map(|l| l.strip_prefix("    lost: ")).collect();
    assert!(!lost.is_empty(), "{entry}");
    for line in &lost {
        assert!(failing.lines().any(|l| l == *line), "{line:?} is not a line of the original");
    }

    let report = json(&replay(&env, &["--rules", dir.to_str().unwrap(), "--format", "json"]));
    assert_eq!(report["evidenceLost"], 2);
    let artifact = report["artifacts"].as_array().unwrap().iter().find(|a| a["id"] == id.as_str());
    let artifact = artifact.expect("the failing run is listed");
    assert_eq!(artifact["rejected"], true);
    assert_eq!(artifact["ruleAfter"], "tests/cargo-test");
    assert_eq!(artifact["lostLines"][0], lost[0]);
}

#[test]
fn a_rule_that_only_trims_noise_changes_renditions_and_saves_tokens_without_losing_evidence() {
    let (env, id, _) = stored();
    let trimmed = cargo_rule_with(|rule| {
        let skip = rule["filters"]["skipPatterns"].as_array_mut().unwrap();
        skip.push("^note: run with `RUST_BACKTRACE=1`".into());
        skip.push("^\\s*Finished `test` profile".into());
        skip.push("^running \\d+ tests?$".into());
    });
    let dir = proposed(&env, "trimmed", &trimmed);
    let out = replay(&env, &["--rules", dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let report = json(&out);
    let cargo = row(&report, "tests/cargo-test");
    assert_eq!(cargo["evidenceLost"], 0);
    assert!(cargo["changed"].as_u64().unwrap() >= 1, "{cargo}");
    assert!(cargo["tokenDelta"].as_i64().unwrap() < 0, "{cargo}");
    assert!(cargo["tokenDeltaPercent"].as_f64().unwrap() < 0.0, "{cargo}");
    assert_eq!(
        cargo["tokenDelta"].as_i64().unwrap(),
        cargo["tokensAfter"].as_i64().unwrap() - cargo["tokensBefore"].as_i64().unwrap()
    );
    assert!(report["artifacts"].as_array().unwrap().iter().any(|a| a["id"] == id.as_str()));
    // The script run by `tj run` is another rule's: untouched.
    assert_eq!(row(&report, "generic/fallback")["changed"], 0);

    let text = stdout(&replay(&env, &["--rules", dir.to_str().unwrap()]));
    let line = text.lines().find(|l| l.starts_with("tests/cargo-test ")).unwrap();
    assert!(line.contains(" -") && line.contains("%)"), "{line}");
    assert!(text.contains("ok: no artifact loses evidence"), "{text}");
}

/// Every file under `dir`: its size, mtime and contents.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path, (meta.len(), meta.modified().unwrap(), bytes));
            }
        }
    }
    out
}

#[test]
fn replay_never_writes_to_the_store_or_the_ledger() {
    let (env, _, _) = stored();
    let ledger = env.data().join("ledger.jsonl");
    assert!(ledger.exists());
    let before = snapshot(&env.data());
    let broken = cargo_rule_with(|rule| {
        rule.insert("matchOutput".into(), serde_json::json!([{ "pattern": ".", "message": "x" }]));
    });
    let dir = proposed(&env, "broken", &broken);
    for args in [&[][..], &["--rules", dir.to_str().unwrap()], &["--format", "json"]] {
        replay(&env, args);
    }
    assert_eq!(snapshot(&env.data()), before, "replay changed the data directory");
}

#[test]
fn json_output_has_the_per_rule_numbers() {
    let (env, _, _) = stored();
    let out = replay(&env, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["before"], "stored renditions");
    assert_eq!(report["replayed"], 3);
    let cargo = row(&report, "tests/cargo-test");
    assert_eq!(cargo["replayed"], 2);
    assert_eq!(cargo["changed"], 0);
    assert_eq!(cargo["tokenDelta"], 0);
    assert!(cargo["tokensBefore"].as_u64().unwrap() > 0);
    assert_eq!(cargo["tokensBefore"], cargo["tokensAfter"]);
    let rows = report["rules"].as_array().unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r["rule"].as_str().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "rows are sorted by rule");
    let total: u64 = rows.iter().map(|r| r["replayed"].as_u64().unwrap()).sum();
    assert_eq!(report["all"]["replayed"].as_u64(), Some(total));

    // --rule keeps one rule's artifacts; --command filters before replaying.
    let one = json(&replay(&env, &["--format", "json", "--rule", "generic/fallback"]));
    assert_eq!(one["replayed"], 1);
    let cargo_only = json(&replay(&env, &["--format", "json", "--command", "cargo"]));
    assert_eq!(cargo_only["replayed"], 2);
    let csv = stdout(&replay(&env, &["--format", "csv"]));
    assert!(csv.starts_with("rule,replayed,changed,"), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("tests/cargo-test,2,0,")), "{csv}");
}

#[test]
fn an_empty_store_says_so_naming_the_data_directory() {
    let env = TestEnv::new();
    let out = replay(&env, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("nothing to replay"), "{text}");
    assert!(text.contains(env.data().to_str().unwrap()), "{text}");
    // JSON stays parseable: the message goes to stderr, an empty report to stdout.
    let out = replay(&env, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["replayed"], 0);
    assert!(stderr(&out).contains("nothing to replay"), "{}", stderr(&out));
    assert!(!env.data().join("spill").exists(), "replay created the store");
}

#[test]
fn a_malformed_or_missing_rules_dir_is_a_usage_error_naming_it() {
    let (env, _, _) = stored();
    let dir = proposed(&env, "malformed", "{ \"id\": \"tests/cargo-test\", ");
    let out = replay(&env, &["--rules", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("malformed/cargo-test.json") && err.contains("could not parse"), "{err}");
    assert!(err.contains("nothing was replayed") && !err.contains("skipped"), "{err}");
    assert_eq!(stdout(&out), "");

    let out = replay(&env, &["--rules", env.root.join("nowhere").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("nowhere"), "{}", stderr(&out));
    let empty = env.root.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = replay(&env, &["--rules", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no rule file"), "{}", stderr(&out));
}

#[test]
fn corrupt_entries_are_skipped_with_one_warning_and_large_originals_are_capped() {
    let (env, _, _) = stored();
    env.write("data/spill/ffffffffffff.json", "{ corrupt");
    env.write("data/spill/eeeeeeeeeeee.json", "{\"id\": \"../../etc/passwd\", \"createdAt\": 1}");
    let out = replay(&env, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("skipped 2 unreadable or corrupt"), "{err}");
    assert!(stdout(&out).contains("replayed 3 originals"));

    // Without --rules a capped original has nothing to compare with; with it, its head is
    // replayed with both sets.
    let out = replay(&env, &["--max-bytes", "2000"]);
    assert!(stderr(&out).contains("larger than 2,000 bytes"), "{}", stderr(&out));
    let dir = proposed(&env, "same", CARGO_TEST_RULE);
    let out = replay(&env, &["--max-bytes", "2000", "--rules", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("first 2,000 bytes were replayed"), "{}", stdout(&out));
}
