//! Issue 13: a run compiles no builtin matcher (the rules' and the evidence classifier's
//! are compiled when tj is built: `src/matchers`, `build.rs`).
//!
//! Alone in its test binary: the count is per process, and nothing else here may compile.

#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report

use tj::matchers;
use tj::rules::RuleSet;
use tj::testing::fixtures;
use tj::verify;

/// Every fixture reduced as `tj run` would (rule selection, the rule's patterns, the
/// classifier, the failing-run words, the alarms, the shapes), twice: not one builtin
/// matcher may be compiled on the way.
#[test]
fn reducing_every_fixture_compiles_no_builtin_matcher() {
    let (embedded, bytes) = matchers::embedded();
    assert!(embedded > 400, "only {embedded} matchers embedded ({bytes} bytes)");
    let rules = RuleSet::builtin();
    let cases = fixtures();
    assert!(cases.len() > 500, "{} fixtures", cases.len());
    let before = matchers::runtime_compiles();
    let mut reduced = 0;
    for case in &cases {
        let report = verify::check_fixture(&rules, case);
        reduced += usize::from(report.reduced);
        let compiled = matchers::runtime_compiles() - before;
        assert_eq!(compiled, 0, "{}: {compiled} builtin matchers compiled at run time", case.id);
    }
    assert!(reduced > 200, "only {reduced} fixtures reduced: the check saw too little");
}
