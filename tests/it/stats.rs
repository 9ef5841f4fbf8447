//! `tj stats` through the binary: totals and groups from a ledger, in text, JSON and CSV;
//! filters; empty ledgers; and the ledger under concurrent writers.

use serde_json::{Value, json};

use crate::util::{TestEnv, stderr, stdout};

/// The block characters bars are drawn with.
const BLOCKS: &[char] = &['█', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/// 2025-12-01T00:00:00Z.
const DEC_1: u64 = 1_764_547_200;
/// 2025-12-02T00:00:00Z.
const DEC_2: u64 = DEC_1 + 86_400;

/// Four runs, as tj writes them, whose totals are worked out by hand below; plus one corrupt
/// line. The second has no family (ledgers written before it was recorded).
fn known_ledger(env: &TestEnv) {
    let entry = |time: u64, command: &str, rule: &str, family: &str, session: Option<&str>| {
        let mut v = json!({
            "time": time, "id": "0123456789ab", "command": command, "rule": rule,
            "cwd": "/work", "exitCode": 0,
        });
        if !family.is_empty() {
            v["family"] = family.into();
        }
        if let Some(session) = session {
            v["session"] = session.into();
        }
        v
    };
    let with = |mut v: Value, tokens: [u64; 2], chars: [u64; 2], flags: [bool; 3]| {
        v["tokens"] = json!(tokens);
        v["chars"] = json!(chars);
        v["reduced"] = flags[0].into();
        v["lossless"] = flags[1].into();
        v["deduped"] = flags[2].into();
        v.to_string()
    };
    let lines = [
        with(
            entry(DEC_2, "cargo test --lib a", "tests/cargo-test", "tests", Some("s1")),
            [10_000, 500],
            [38_000, 1_900],
            [true, false, false],
        ),
        with(
            entry(DEC_2 + 3_600, "cargo test b", "tests/cargo-test", "", Some("s2")),
            [4_000, 1_000],
            [15_200, 3_800],
            [true, true, false],
        ),
        "{\"time\": 1764547200, \"tokens\": [1, tor".to_owned(),
        with(
            entry(DEC_1, "git status", "git/status", "git", None),
            [200, 200],
            [760, 760],
            [false, false, false],
        ),
        with(
            entry(DEC_1 + 60, "git status", "git/status", "git", Some("s1")),
            [2_000, 30],
            [7_600, 114],
            [true, true, true],
        ),
    ];
    env.write("data/ledger.jsonl", &(lines.join("\n") + "\n"));
}

/// The words of the first line of `text` that starts with `key` and a space.
fn row<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    let line = text.lines().find(|l| l.starts_with(&format!("{key} "))).unwrap_or_else(|| {
        panic!("no row `{key}` in:\n{text}");
    });
    line[key.len()..].split_whitespace().collect()
}

#[test]
fn stats_add_up_a_known_ledger_in_text_json_and_csv() {
    let env = TestEnv::new();
    known_ledger(&env);

    let out = env.run(&["stats"], b"");
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{err}");
    assert_eq!(err, "tj: warning: 1 ledger line could not be read; skipped\n");
    assert!(text.starts_with("tj stats: 4 runs in "), "{text}");
    assert!(text.contains("ledger.jsonl"), "{text}");
    // Totals: raw 16,200 tokens, rendition 1,730, avoided 14,470 (89 % of raw).
    assert!(text.contains("16,200   raw → 1,730 rendition"), "{text}");
    assert!(text.contains("avoided (estimate)          14,470   tokens, 89% of raw"), "{text}");
    assert!(text.contains("\nruns                             4\n"), "{text}");
    assert!(text.contains("3   75% of runs; 2 lossless (66% of reduced)\n"), "{text}");
    assert!(text.contains("\ndeduped                          1   "), "{text}");
    assert!(text.contains("61,560   raw → 6,574 rendition, 54,986 avoided"), "{text}");
    // Groups, most avoided first: runs, lossless share, raw, rendition, avoided.
    assert_eq!(row(&text, "tests"), ["2", "50%", "14,000", "1,500", "12,500"]);
    assert_eq!(row(&text, "git"), ["2", "100%", "2,200", "230", "1,970"]);
    assert_eq!(row(&text, "cargo test"), ["2", "50%", "14,000", "1,500", "12,500"]);
    assert_eq!(row(&text, "git/status"), ["2", "100%", "2,200", "230", "1,970"]);
    assert_eq!(row(&text, "2025-12-02"), ["2", "50%", "14,000", "1,500", "12,500"]);
    assert_eq!(row(&text, "2025-12-01"), ["2", "100%", "2,200", "230", "1,970"]);
    assert!(text.find("\ntests ").unwrap() < text.find("\ngit ").unwrap(), "{text}");
    assert!(text.contains("Tokens are tj's estimate"), "{text}");
    // Through a pipe: no bars.
    assert!(!text.contains(BLOCKS), "{text}");

    let out = env.run(&["stats", "--format", "json"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["recorded"], 4);
    assert_eq!(doc["skipped"], 1);
    let totals = &doc["totals"];
    assert_eq!(
        (&totals["runs"], &totals["reduced"], &totals["lossless"], &totals["deduped"]),
        (&json!(4), &json!(3), &json!(2), &json!(1))
    );
    assert_eq!(totals["losslessShare"], 0.6667);
    assert_eq!(totals["tokens"], json!({"raw": 16_200, "rendition": 1_730, "avoided": 14_470}));
    assert_eq!(totals["chars"], json!({"raw": 61_560, "rendition": 6_574, "avoided": 54_986}));
    let keys = |group: &str| -> Vec<String> {
        doc[group].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap().into()).collect()
    };
    assert_eq!(keys("byFamily"), ["tests", "git"]);
    assert_eq!(keys("byRule"), ["tests/cargo-test", "git/status"]);
    assert_eq!(keys("byCommand"), ["cargo test", "git status"]);
    assert_eq!(keys("byDay"), ["2025-12-02", "2025-12-01"]);
    assert_eq!(doc["byFamily"][1]["tokens"]["avoided"], 1_970);
    assert!(doc["estimator"].as_str().unwrap().contains("estimate"), "{doc}");
    // Stable: the same ledger gives the same bytes.
    assert_eq!(env.run(&["stats", "--format", "json"], b"").stdout, out.stdout);

    let out = env.run(&["stats", "--format", "csv"], b"");
    let csv = stdout(&out);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "group,key,runs,reduced,lossless,deduped,raw_tokens,rendition_tokens,avoided_tokens_estimate,raw_chars,rendition_chars,avoided_chars",
            "total,,4,3,2,1,16200,1730,14470,61560,6574,54986",
            "family,tests,2,2,1,0,14000,1500,12500,53200,5700,47500",
        ],
        "{csv}"
    );
    assert_eq!(lines.len(), 3 + 1 + 2 + 2 + 2, "{csv}");
    assert!(lines.contains(&"day,2025-12-01,2,1,1,1,2200,230,1970,8360,874,7486"), "{csv}");

    // --by picks tables, in every format.
    let out = env.run(&["stats", "--by", "rule", "--format", "json"], b"");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("byFamily").is_none() && doc["byRule"].is_array(), "{doc}");
    let text = stdout(&env.run(&["stats", "--by", "day,command"], b""));
    assert!(text.contains("by command") && text.contains("by day"), "{text}");
    assert!(!text.contains("by family") && !text.contains("by rule"), "{text}");
    assert!(text.find("by command").unwrap() < text.find("by day").unwrap(), "{text}");
}

#[test]
fn since_and_session_filter_the_ledger() {
    let env = TestEnv::new();
    known_ledger(&env);
    let runs = |args: &[&str]| -> (u64, u64) {
        let mut argv = vec!["stats", "--format", "json"];
        argv.extend_from_slice(args);
        let out = env.run(&argv, b"");
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        (doc["totals"]["runs"].as_u64().unwrap(), doc["totals"]["tokens"]["raw"].as_u64().unwrap())
    };
    assert_eq!(runs(&[]), (4, 16_200));
    assert_eq!(runs(&["--since", "2025-12-02"]), (2, 14_000));
    assert_eq!(runs(&["--since", "2025-12-01"]), (4, 16_200));
    assert_eq!(runs(&["--session", "s1"]), (2, 12_000));
    assert_eq!(runs(&["--session", "s2"]), (1, 4_000));
    assert_eq!(runs(&["--session", "s"]), (0, 0));
    assert_eq!(runs(&["--since", "2025-12-02", "--session", "s1"]), (1, 10_000));
    // An age is relative to now: these runs are in 2025, older than a day.
    assert_eq!(runs(&["--since", "1d"]), (0, 0));

    let out = env.run(&["stats", "--session", "s9"], b"");
    assert!(out.status.success());
    assert_eq!(
        stdout(&out).trim_end(),
        format!(
            "no runs match (session s9) among 4 recorded in {}",
            env.data().join("ledger.jsonl").display()
        )
    );
    let text = stdout(&env.run(&["stats", "--session", "s1"], b""));
    assert!(text.contains("only session s1, of 4 recorded"), "{text}");
    let out = env.run(&["stats", "--since", "yesterday"], b"");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("neither a date"), "{}", stderr(&out));
}

#[test]
fn an_empty_or_missing_ledger_says_so() {
    let env = TestEnv::new();
    let ledger = env.data().join("ledger.jsonl");
    for setup in ["missing", "empty"] {
        if setup == "empty" {
            env.write("data/ledger.jsonl", "");
        }
        let out = env.run(&["stats"], b"");
        assert!(out.status.success(), "{setup}: {}", stderr(&out));
        assert_eq!(
            stdout(&out).trim_end(),
            format!(
                "no runs recorded yet in {}; tj records a line for every `tj reduce` and every `tj run` that gives an agent a rendition",
                ledger.display()
            ),
            "{setup}"
        );
        assert_eq!(stderr(&out), "", "{setup}");

        let out = env.run(&["stats", "--format", "json"], b"");
        assert!(out.status.success(), "{setup}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["totals"]["runs"], 0, "{doc}");
        assert_eq!(doc["totals"]["losslessShare"], Value::Null, "{doc}");
        for group in ["byFamily", "byRule", "byCommand", "byDay"] {
            assert_eq!(doc[group], json!([]), "{setup}: {group}");
        }

        let out = env.run(&["stats", "--format", "csv"], b"");
        assert!(out.status.success(), "{setup}");
        let csv = stdout(&out);
        assert_eq!(csv.lines().count(), 2, "{csv}");
        assert!(csv.ends_with("\ntotal,,0,0,0,0,0,0,0,0,0,0\n"), "{csv}");
    }
}

#[test]
fn a_ledger_of_nothing_but_corrupt_lines_is_not_called_empty() {
    let env = TestEnv::new();
    env.write("data/ledger.jsonl", "garbage\n{\"time\":1}\n");
    let out = env.run(&["stats"], b"");
    assert!(out.status.success());
    assert!(stdout(&out).starts_with("no readable runs in "), "{}", stdout(&out));
    assert_eq!(stderr(&out), "tj: warning: 2 ledger lines could not be read; skipped\n");
}

/// Eight `tj reduce` processes at once, each recording 25 runs whose ledger lines are longer
/// than a pipe's atomic write (4 KiB): every line lands whole, and `tj stats` counts them all.
#[test]
fn concurrent_writers_never_tear_ledger_lines() {
    const WRITERS: usize = 8;
    const RUNS: usize = 25;
    let env = TestEnv::new();
    let padding = "x".repeat(2_000);
    std::thread::scope(|scope| {
        for writer in 0..WRITERS {
            let (env, padding) = (&env, &padding);
            scope.spawn(move || {
                for run in 0..RUNS {
                    let command = format!("cargo test writer{writer} {padding}");
                    let cwd = format!("/work/{writer}/{padding}");
                    let input = crate::util::cargo_test_output(writer * 100 + run);
                    let mut cmd = env.cmd(&["reduce", "--exit-code", "101", "--command", &command]);
                    cmd.env("TJ_SESSION", format!("writer-{writer}-{cwd}"));
                    let out = env.run_cmd(cmd, input.as_bytes());
                    assert!(out.status.success(), "{}", stderr(&out));
                    assert_eq!(stderr(&out), "", "writer {writer}, run {run}");
                }
            });
        }
    });
    #[allow(clippy::disallowed_methods)]
    let ledger = std::fs::read_to_string(env.data().join("ledger.jsonl")).unwrap();
    let mut per_writer = [0usize; WRITERS];
    let mut longest = 0;
    for line in ledger.lines() {
        longest = longest.max(line.len());
        let v: Value = serde_json::from_str(line).unwrap_or_else(|err| {
            panic!("a torn ledger line ({err}): {line}");
        });
        let session = v["session"].as_str().unwrap();
        let writer: usize = session["writer-".len()..session.find("-/").unwrap()].parse().unwrap();
        assert!(v["command"].as_str().unwrap().starts_with(&format!("cargo test writer{writer} ")));
        per_writer[writer] += 1;
    }
    assert_eq!(per_writer, [RUNS; WRITERS], "{per_writer:?}");
    assert!(longest > 4_096, "lines of {longest} bytes do not test writes past PIPE_BUF");

    let out = env.run(&["stats", "--format", "json"], b"");
    assert_eq!(stderr(&out), "");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["totals"]["runs"], WRITERS * RUNS, "{doc}");
    assert_eq!(doc["skipped"], 0);
    assert_eq!(doc["byCommand"][0]["key"], "cargo test");
    assert_eq!(doc["byCommand"][0]["runs"], WRITERS * RUNS);
}
