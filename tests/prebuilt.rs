//! Issue 13, the build-time check: the builtin rules' matchers embedded when tj was built
//! (`src/matchers`, `build.rs`) match exactly what their patterns compiled at run time
//! match, on the fixtures. (The classifier's: `reduce::evidence`'s unit tests. That no run
//! compiles any: `tests/no_runtime_compile.rs`, alone in its process.)

#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report

use tj::matchers;
use tj::rules::RuleSet;
use tj::rules::compiled::{Budget, CompiledRule, Compiler};
use tj::testing::{each_builtin_line_list, fixtures};
use tj::verify;

/// The build-time check for the rules: each fixture's rule, with its matchers taken from
/// the binary, classifies every line of the fixture, counts and matches the output exactly
/// as the same rule compiled now on tj's run-time engines (those of a user rule).
#[test]
fn embedded_rule_matchers_match_as_compiled_at_run_time_on_the_fixtures() {
    let rules = RuleSet::builtin();
    let budget = Budget::unlimited();
    let mut lines_checked = 0;
    for case in fixtures() {
        let report = verify::check_fixture(&rules, &case);
        let Some(loaded) = rules.rules().iter().find(|r| r.rule.id == report.rule) else {
            continue;
        };
        let embedded = CompiledRule::compile(&loaded.rule);
        let runtime = CompiledRule::compile_with(&loaded.rule, &Compiler::untrusted(&budget));
        assert!(embedded.problems.is_empty() && runtime.problems.is_empty(), "{}", report.rule);
        assert!(!runtime.over_limit, "{}", report.rule);
        let (mut a, mut b) = (embedded.lines.scratch(), runtime.lines.scratch());
        // As a reduction asks: each line's lists narrowed by their prefilters first.
        let lines = tj::reduce::split_lines(&case.text);
        let among = embedded.lines.candidates(&case.text, &lines);
        for (line, among) in lines.iter().zip(among) {
            let (x, y) = (
                embedded.lines.kinds_among(line, among, &mut a, &budget),
                runtime.lines.kinds(line, &mut b, &budget),
            );
            assert_eq!(x, y, "{} on {line:?}", report.rule);
            assert_eq!(x, embedded.lines.kinds(line, &mut a, &budget), "{}", report.rule);
            for ((name, p), (_, q)) in embedded.counters.iter().zip(&runtime.counters) {
                assert_eq!(
                    p.is_match(line),
                    q.is_match(line),
                    "{}: counter {name} on {line:?}",
                    report.rule
                );
            }
            lines_checked += 1;
        }
        for ((p, message), (q, _)) in embedded.outputs.iter().zip(&runtime.outputs) {
            assert_eq!(
                p.is_match(&case.text),
                q.is_match(&case.text),
                "{}: {message}",
                report.rule
            );
        }
        assert_eq!(embedded.counters.len(), runtime.counters.len());
        assert_eq!(embedded.outputs.len(), runtime.outputs.len());
    }
    assert!(lines_checked > 100_000, "only {lines_checked} lines compared");
}

/// `match.commandRegex`, embedded, says of every fixture's command what it says compiled
/// now, for every builtin rule that has one.
#[test]
fn embedded_command_regexes_select_as_compiled_at_run_time() {
    let rules = RuleSet::builtin();
    let budget = Budget::unlimited();
    let commands: Vec<String> =
        fixtures().into_iter().map(|c| c.command.unwrap_or_else(|| c.argv.join(" "))).collect();
    let mut compared = 0;
    for loaded in rules.rules() {
        let Some(re) = &loaded.rule.matcher.command_regex else { continue };
        let embedded = Compiler::builtin().one_shot(re, None).unwrap();
        let runtime = Compiler::untrusted(&budget).pattern(re, None).unwrap();
        for command in &commands {
            assert_eq!(
                embedded.is_match(command),
                runtime.is_match(command),
                "{re} on {command:?}"
            );
            compared += 1;
        }
    }
    assert!(compared > 1000, "only {compared} commands compared");
}

/// Issue 13, the line lists' prefilters are conservative: for every builtin list with one
/// and every fixture line, a line in which the prefilter finds none of its literals is a
/// line the list's DFA does not match (the prefilter only ever skips lines that cannot
/// match). Lines are scanned in place, as a reduction scans them.
#[test]
fn a_line_list_prefilter_skips_only_lines_its_list_cannot_match() {
    let texts: Vec<String> = fixtures().into_iter().map(|c| c.text).collect();
    let split: Vec<Vec<&str>> = texts.iter().map(|t| tj::reduce::split_lines(t)).collect();
    let (mut with_prefilter, mut skipped) = (0, 0_usize);
    each_builtin_line_list(|rule, spec| {
        let patterns = spec.patterns;
        let dfa = matchers::prebuilt(spec).unwrap_or_else(|| panic!("{rule}: embedded"));
        let Some(prefilter) = matchers::prefilter(spec) else { return };
        with_prefilter += 1;
        for (text, lines) in texts.iter().zip(&split) {
            let mut flagged = vec![false; lines.len()];
            assert!(matchers::scan_in_place(&prefilter, text, lines, |k| flagged[k] = true));
            for (line, _) in lines.iter().zip(&flagged).filter(|(_, f)| !**f) {
                assert!(!prefilter.is_match(line.as_bytes()), "{rule}: scan missed {line:?}");
                assert!(!dfa.is_match(line.as_bytes()), "{rule}: {patterns:?} on {line:?}");
                skipped += 1;
            }
        }
    });
    assert!(with_prefilter > 200, "only {with_prefilter} lists have a prefilter");
    assert!(skipped > 1_000_000, "only {skipped} lines skipped");
}

/// Issue 13, the line lists' sure shapes are sound: for every builtin list and every fixture
/// line, a line of one of the list's sure shapes is a line its DFA matches (a shape only ever
/// spares a walk whose answer is yes). And they are worth having: they answer for many lines.
#[test]
fn a_line_list_sure_shape_answers_only_for_lines_its_list_matches() {
    let texts: Vec<String> = fixtures().into_iter().map(|c| c.text).collect();
    let split: Vec<Vec<&str>> = texts.iter().map(|t| tj::reduce::split_lines(t)).collect();
    let (mut with_shapes, mut answered) = (0, 0_usize);
    each_builtin_line_list(|rule, spec| {
        let shapes = matchers::sure_shapes(spec);
        if shapes.is_empty() {
            return;
        }
        with_shapes += 1;
        let dfa = matchers::prebuilt(spec).unwrap_or_else(|| panic!("{rule}: embedded"));
        for line in split.iter().flatten() {
            if shapes.iter().any(|s| s.matches(line.as_bytes())) {
                assert!(dfa.is_match(line.as_bytes()), "{rule}: {shapes:?} on {line:?}");
                answered += 1;
            }
        }
    });
    assert!(with_shapes > 100, "only {with_shapes} lists have a sure shape");
    assert!(answered > 1_000, "only {answered} lines answered by a shape");
}
