//! Property tests of the lossy shape reducers on generated input (the lossless JSON tables
//! have theirs beside their decoder, in `src/reduce/shape/{json_table,ndjson}.rs`).
//!
//! What must hold whatever the input: no panic, the same answer twice, indices within the
//! input, and each shape's own promise (a table keeps its header and flagged rows, elision
//! keeps original lines and what `keep_value` names, a fold never swallows an alarm, a
//! tally adds up, a sampled lint list keeps every kind).

#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report

use proptest::prelude::*;
use tj::reduce::shape::{diagnostics, json_elide, log, table, testrun};

// ---------------------------------------------------------------------------------------
// table

const STATUSES: &[&str] =
    &["Running", "Running", "Running", "Completed", "CrashLoopBackOff", "Pending"];

/// A `kubectl get pods`-like table: names, READY, STATUS, RESTARTS, AGE, aligned.
fn pods(rows: &[(usize, usize, u8)]) -> Vec<String> {
    let mut out =
        vec![format!("{:<40}{:<8}{:<20}{:<10}{}", "NAME", "READY", "STATUS", "RESTARTS", "AGE")];
    for (i, (status, restarts, age)) in rows.iter().enumerate() {
        let status = STATUSES[*status % STATUSES.len()];
        let ready = if status == "Running" { "1/1" } else { "0/1" };
        out.push(format!(
            "{:<40}{:<8}{:<20}{:<10}{}d",
            format!("api-{i:04}-7f9c8d"),
            ready,
            status,
            restarts,
            age
        ));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn table_sampling_keeps_header_flagged_rows_and_is_stable(
        rows in proptest::collection::vec((0usize..6, 0usize..3, 1u8..90), 8..300),
        head in 0usize..20,
        tail in 0usize..20,
    ) {
        let owned = pods(&rows);
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let layout = table::detect(&lines).expect("an aligned table");
        prop_assert_eq!(layout.header, 0);
        let evidence = vec![false; lines.len()];
        let keep = table::sample(&lines, &layout, &evidence, head, tail);
        prop_assert_eq!(keep.len(), lines.len());
        prop_assert!(keep[0], "the header stays");
        for i in table::flagged(&lines, &layout) {
            prop_assert!(keep[i], "flagged row {} dropped: {}", i, lines[i]);
        }
        for (i, line) in lines.iter().enumerate() {
            if line.contains("CrashLoopBackOff") {
                prop_assert!(keep[i], "a crashing pod was sampled away: {}", line);
            }
        }
        prop_assert_eq!(table::sample(&lines, &layout, &evidence, head, tail), keep);
    }

    #[test]
    fn table_detection_never_panics_on_arbitrary_text(text in "[ -~\t\n|+─-]{0,2000}") {
        let lines: Vec<&str> = text.lines().collect();
        if let Some(layout) = table::detect(&lines) {
            prop_assert!(layout.header < lines.len());
            prop_assert!(layout.rows.end <= lines.len());
            let keep = table::sample(&lines, &layout, &vec![false; lines.len()], 3, 3);
            prop_assert_eq!(keep.len(), lines.len());
        }
    }
}

// ---------------------------------------------------------------------------------------
// json_elide

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i32>().prop_map(serde_json::Value::from),
        "[a-z ]{0,12}".prop_map(serde_json::Value::from),
        Just(serde_json::Value::from("connection refused: error 111")),
    ];
    leaf.prop_recursive(4, 400, 40, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..40).prop_map(serde_json::Value::from),
            proptest::collection::btree_map("[a-z]{1,8}", inner, 0..30)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn elision_keeps_original_lines_and_named_values(value in json_value(), four in any::<bool>()) {
        let text = if four {
            let mut buf = Vec::new();
            let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
            let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
            serde::Serialize::serialize(&value, &mut ser).unwrap();
            String::from_utf8(buf).unwrap()
        } else {
            serde_json::to_string_pretty(&value).unwrap()
        };
        let keep = |s: &str| s.contains("connection refused");
        let limits = json_elide::Limits::default();
        let Some(elided) = json_elide::elide(&text, &limits, &keep) else { return Ok(()) };
        prop_assert_eq!(json_elide::elide(&text, &limits, &keep).map(|e| e.text), Some(elided.text.clone()));
        let original: std::collections::HashSet<&str> = text.lines().collect();
        for line in elided.text.lines() {
            let marker = line.trim_start().starts_with("… ") && line.ends_with(" …");
            prop_assert!(marker || original.contains(line), "not an original line: {:?}", line);
        }
        let wanted = text.lines().filter(|l| l.contains("connection refused")).count();
        let kept = elided.text.lines().filter(|l| l.contains("connection refused")).count();
        prop_assert_eq!(kept, wanted, "a value keep_value names was elided");
    }

    #[test]
    fn elision_never_panics_on_arbitrary_text(text in "[{}\\[\\]\":,0-9a-z \n]{0,400}") {
        let _ = json_elide::elide(&text, &json_elide::Limits::default(), &|_| false);
    }
}

// ---------------------------------------------------------------------------------------
// log

fn log_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0u32..86_400, 0u32..999).prop_map(|(t, ms)| format!(
            "2026-11-30T{:02}:{:02}:{:02}.{ms:03}Z GET /health 200 {}ms",
            t / 3600, t / 60 % 60, t % 60, ms % 40
        )),
        2 => (0u32..500).prop_map(|n| format!("processed batch id={n} in {}ms", n % 97)),
        1 => (0u32..99).prop_map(|n| format!("ERROR job {n} failed: timeout")),
        1 => "[a-z ]{0,30}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn folds_are_sorted_bounded_and_never_swallow_an_alarm(
        owned in proptest::collection::vec(log_line(), 0..400),
        flags in proptest::collection::vec(any::<bool>(), 400),
    ) {
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        // About one line in fourteen is evidence.
        let evidence: Vec<bool> = flags
            .iter()
            .take(lines.len())
            .enumerate()
            .map(|(i, f)| *f && i.is_multiple_of(7))
            .collect();
        let folds = log::fold(&lines, &evidence);
        prop_assert_eq!(&log::fold(&lines, &evidence), &folds);
        let mut last_end = 0;
        for f in &folds {
            prop_assert!(f.start >= last_end && f.start < f.end && f.end <= lines.len());
            prop_assert!((1..=log::MAX_PERIOD).contains(&f.period));
            prop_assert!((f.end - f.start) % f.period == 0 && (f.end - f.start) / f.period >= 3);
            for i in f.start..f.end {
                prop_assert!(!evidence[i], "a fold holds evidence line {}", i);
                prop_assert!(!log::is_alarm(lines[i]), "a fold holds an alarm: {}", lines[i]);
            }
            // What folds is the same modulo volatile parts, block by block.
            for i in f.start + f.period..f.end {
                prop_assert_eq!(log::normalize(lines[i]), log::normalize(lines[i - f.period]));
            }
            last_end = f.end;
        }
    }
}

// ---------------------------------------------------------------------------------------
// testrun

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn cargo_targets_are_summed_and_each_failure_counts_once(
        targets in proptest::collection::vec((0u64..400, 0u64..5, 0u64..3), 1..6),
    ) {
        let mut text = String::new();
        for (t, (passed, failed, ignored)) in targets.iter().enumerate() {
            text.push_str(&format!("     Running tests/t{t}.rs (target/debug/deps/t{t}-0123)\n\nrunning {}\n", passed + failed + ignored));
            for i in 0..*failed {
                text.push_str(&format!("test t{t}::case_{i} ... FAILED\n"));
            }
            if *failed > 0 {
                text.push_str("\nfailures:\n");
                for i in 0..*failed {
                    text.push_str(&format!("    t{t}::case_{i}\n"));
                }
            }
            let verdict = if *failed > 0 { "FAILED" } else { "ok" };
            text.push_str(&format!("\ntest result: {verdict}. {passed} passed; {failed} failed; {ignored} ignored; 0 measured; 0 filtered out; finished in 0.01s\n\n"));
        }
        let lines: Vec<&str> = text.lines().collect();
        let tally = testrun::tally(&lines).expect("a cargo run");
        prop_assert_eq!(tally.passed, targets.iter().map(|t| t.0).sum::<u64>());
        prop_assert_eq!(tally.failed, targets.iter().map(|t| t.1).sum::<u64>());
        prop_assert_eq!(tally.skipped, targets.iter().map(|t| t.2).sum::<u64>());
    }

    #[test]
    fn pytest_summary_is_read_exactly(passed in 0u64..5000, failed in 0u64..50, skipped in 0u64..20, errors in 0u64..5) {
        let mut parts = Vec::new();
        if failed > 0 { parts.push(format!("{failed} failed")); }
        parts.push(format!("{passed} passed"));
        if skipped > 0 { parts.push(format!("{skipped} skipped")); }
        if errors > 0 { parts.push(format!("{errors} errors")); }
        let summary = format!("==================== {} in 2.31s ====================", parts.join(", "));
        let tally = testrun::tally(&["collected 9 items", "", &summary]).expect("a pytest summary");
        prop_assert_eq!((tally.passed, tally.failed, tally.skipped, tally.errors), (passed, failed, skipped, errors));
    }

    #[test]
    fn tally_never_panics_on_arbitrary_lines(owned in proptest::collection::vec("[ -~]{0,80}", 0..60)) {
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let _ = testrun::tally(&lines);
    }
}

// ---------------------------------------------------------------------------------------
// diagnostics

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_sampled_lint_list_keeps_every_kind(
        items in proptest::collection::vec((0usize..12, 1u32..2000, 1u32..120), 0..1500),
    ) {
        const CODES: &[&str] = &["E501 line too long", "E302 expected blank lines", "F401 imported but unused",
            "W291 trailing whitespace", "E231 missing whitespace", "C901 too complex"];
        let owned: Vec<String> = items
            .iter()
            .map(|(k, line, col)| format!("src/m{}.py:{line}:{col}: {}", k % 5, CODES[k % CODES.len()]))
            .collect();
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let evidence = vec![true; lines.len()];
        let kinds = diagnostics::kinds(&lines, &evidence);
        let Some(sampled) = diagnostics::sample(&kinds) else {
            prop_assert!(lines.len() <= diagnostics::BUDGET);
            return Ok(());
        };
        let dropped: std::collections::HashSet<usize> = sampled.dropped.iter().copied().collect();
        for kind in &kinds {
            let kept = kind.items.iter().filter(|i| !dropped.contains(i)).count();
            if kind.items.len() <= diagnostics::FEW {
                prop_assert_eq!(kept, kind.items.len(), "a small kind lost items");
            } else {
                prop_assert_eq!(kept, diagnostics::PER_KIND);
                let line = diagnostics::summary(kind.items.len(), &kind.signature);
                prop_assert!(sampled.summaries.contains(&line), "no summary for {}", kind.signature);
            }
        }
    }
}
