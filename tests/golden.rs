//! The golden test: every fixture under `tests/fixtures/` reduced in-process with the
//! builtin rules, its invariants checked, and its rendition snapshotted for review.
//!
//! Invariants on every case (ruff's `ensure_*`, STYLE.md 2.6): every `must_keep` survives;
//! `must_drop` is gone wherever a reduction was adopted; every evidence line survives; two
//! runs are byte-identical; every line is the original's or visibly tj's; nothing larger is
//! adopted. Then every builtin rule must be selected by at least one fixture.

#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::Path;

use tj::reduce::{self, Options};
use tj::rules::RuleSet;
use tj::testing::fixtures;
use tj::verify::{self, Fixture};

fn load(path: &Path) -> Fixture {
    let text = std::fs::read_to_string(path).expect("fixture is readable");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn reductions() {
    let rules = RuleSet::builtin();
    let artifact = verify::fixture_artifact();
    insta::glob!("fixtures/**/*.json", |path| {
        let case = load(path);
        let report = verify::check_fixture(&rules, &case);
        assert!(report.problems.is_empty(), "{}", report.problems.join("\n"));
        let input = case.input();
        let out = reduce::reduce(
            &input,
            &rules,
            &Options { artifact: Some(&artifact), ..Options::default() },
        );
        let header = format!(
            "rule: {} · reduced: {} · tokens {} → {} · chars {} → {}",
            out.rule,
            out.is_reduced(),
            out.raw_tokens,
            out.reduced_tokens,
            out.raw_chars,
            out.reduced_chars
        );
        insta::assert_snapshot!(format!("{header}\n---\n{}", out.text));
    });
}

/// Loading only the rules a program could select (what `tj run` and `tj reduce` do) picks
/// the rule the whole set picks, for every fixture.
#[test]
fn lazy_loading_selects_what_the_whole_set_selects() {
    use tj::rules::select::{self, Query};
    let rules = RuleSet::builtin();
    let mut checked = 0;
    for case in fixtures() {
        let query = Query {
            argv: &case.argv,
            command: case.command.as_deref(),
            exit_code: case.exit_code,
            ..Query::default()
        };
        let identity = select::identify(&query);
        let argv: &[String] = if identity.compound { &[] } else { &identity.argv };
        let rendered = tj::reduce::screen_width(case.text.as_bytes(), case.cols());
        let lines = tj::reduce::split_lines(&rendered);
        let lazy = RuleSet::builtin_for(argv);
        let whole = select::select(&rules, &query, Some(&lines)).rule.rule.id.clone();
        let part = select::select(&lazy, &query, Some(&lines)).rule.rule.id.clone();
        assert_eq!(part, whole, "{}", case.id);
        checked += 1;
    }
    assert!(checked > 500);
}

#[test]
fn every_builtin_rule_has_a_fixture() {
    let rules = RuleSet::builtin();
    let mut cases = Vec::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "json") {
                cases.push(load(&p));
            }
        }
    }
    let uncovered = verify::uncovered_rules(&rules, &cases);
    assert!(uncovered.is_empty(), "rules without a fixture: {uncovered:?}");
}

/// Issue 12: a data output (a listing, search, query, table, log) whose original fits in the
/// data budget keeps every record. Each non-blank line of the original is in the rendition
/// or decodes from it through its lossless route; the only lines allowed to be missing are
/// those the rule names as noise, which the closing notice counts, and none of them may be
/// evidence. JSON re-encodings are checked value for value by the golden test's round trip.
#[test]
fn data_within_the_budget_keeps_every_record() {
    use tj::reduce::data;
    use tj::rules::schema::Kind;
    let rules = RuleSet::builtin();
    let artifact = verify::fixture_artifact();
    let mut checked = Vec::new();
    for case in fixtures() {
        let input = case.input();
        let opts = Options { artifact: Some(&artifact), ..Options::default() };
        let out = reduce::run(&input, &rules, &opts);
        let rule = &rules.get(&out.rule).unwrap().rule;
        if data::kind_of(rule, out.fallback, case.exit_code) != Kind::Data
            || out.shape.is_some_and(|s| s.contains("json"))
        {
            continue;
        }
        let rendered = reduce::screen_width(case.text.as_bytes(), case.cols());
        let original: Vec<&str> =
            reduce::split_lines(&rendered).into_iter().filter(|l| !l.is_empty()).collect();
        if tj::reduce::tokens::estimate(&original.join("\n")) > tj::reduce::gate::DATA_BUDGET {
            continue;
        }
        let recovered: Vec<String> = match out.shape {
            Some(shape) if data::is_route(shape) => {
                data::decode(shape, &out.text, out.omitted.lines() > 0).unwrap()
            }
            _ => out.text.lines().map(str::to_owned).collect(),
        };
        let recovered: std::collections::HashSet<&str> =
            recovered.iter().map(String::as_str).collect();
        let evidence = reduce::evidence_of(case.text.as_bytes(), case.cols());
        let missing: Vec<&str> =
            original.iter().copied().filter(|l| !recovered.contains(l)).collect();
        assert!(
            missing.len() <= out.omitted.noise,
            "{}: {} records lost (the rule's noise: {}), the first {:?}",
            case.id,
            missing.len(),
            out.omitted.noise,
            missing.first()
        );
        for line in &missing {
            assert!(!evidence.iter().any(|e| e == line), "{}: evidence {line:?} lost", case.id);
        }
        checked.push(case.id);
    }
    println!("{} data fixtures within the budget keep every record", checked.len());
    assert!(
        checked.len() >= 60,
        "only {} data fixtures within the budget: {checked:?}",
        checked.len()
    );
}

/// What a route's decoder gave back.
type Decoded = Result<Vec<String>, String>;

/// Issue 12: every lossless route decodes its encoding of every fixture back exactly,
/// whether or not the pipeline would adopt it (each encoder checks itself and declines on a
/// mismatch; this catches a route that declines where it should not, and proves the routes
/// on real outputs rather than generated ones).
#[test]
fn every_route_round_trips_on_every_fixture() {
    use tj::reduce::shape::{columns, compact_json, paths, repeats};
    let mut encoded = [0usize; 4];
    for case in fixtures() {
        let rendered = reduce::screen_width(case.text.as_bytes(), case.cols());
        let lines = reduce::split_lines(&rendered);
        let first = lines.iter().position(|l| !l.is_empty()).unwrap_or(0);
        let last = lines.iter().rposition(|l| !l.is_empty()).map_or(0, |i| i + 1);
        let lines = &lines[first..last.max(first)];
        let want: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        let routes: [(&str, Option<Decoded>); 3] = [
            ("paths", paths::encode(lines).map(|t| paths::decode(&t).map_err(|e| e.to_string()))),
            (
                "repeats",
                repeats::encode(lines).map(|t| repeats::decode(&t).map_err(|e| e.to_string())),
            ),
            (
                "columns",
                columns::encode(lines).map(|t| columns::decode(&t).map_err(|e| e.to_string())),
            ),
        ];
        for (n, (name, decoded)) in routes.into_iter().enumerate() {
            if let Some(decoded) = decoded {
                encoded[n] += 1;
                assert_eq!(decoded.as_ref(), Ok(&want), "{name} on {}", case.id);
            }
        }
        let body = lines.join("\n");
        if let Some(text) = compact_json::encode(&body) {
            encoded[3] += 1;
            assert_eq!(compact_json::decode(&text).ok(), Some(body), "compact JSON on {}", case.id);
        }
    }
    println!(
        "fixtures encoded: paths {}, repeats {}, columns {}, compact JSON {}",
        encoded[0], encoded[1], encoded[2], encoded[3]
    );
    assert!(encoded.iter().all(|&n| n > 0), "a route encoded no fixture at all: {encoded:?}");
}
