//! The counts of a test run (DESIGN.md "Reduction": "301 passed, 3 failed, 1 ignored"),
//! read from the runner's own summary lines, counted correctly.
//!
//! [`tally`] prefers what the runner says about itself and knows each runner's quirks:
//! cargo prints one `test result:` line per test target (summed), Maven prints per-class
//! lines and a total (only the total counts), jest prints a `Test Suites:` line next to the
//! `Tests:` one (only tests count), pytest's `warnings` are not tests. A run cut short before
//! its summary is counted from its per-test lines, each test name once even when the runner
//! lists a failure twice (cargo in `test … FAILED` and the `failures:` list; pytest in the
//! body and the short summary).
//!
//! | runner | counted from |
//! |---|---|
//! | cargo test | every `test result: … N passed; N failed; N ignored`, summed; a last target cut short adds its `test … ok/FAILED/ignored` lines |
//! | cargo-nextest | `Summary […] N tests run: N passed, N failed, N skipped` (`timed out` counts as failed) |
//! | pytest | `== N failed, N passed, N skipped, N errors in 1.2s ==` (`xpassed` counts as passed, `xfailed` as skipped, `warnings`, `deselected` and `rerun` not at all) |
//! | unittest | `Ran N tests` then `OK (skipped=N)` / `FAILED (failures=N, errors=N, skipped=N)` |
//! | jest | `Tests: N failed, N skipped, N todo, N passed, N total` (not `Test Suites:`) |
//! | vitest | `Tests  N failed \| N passed \| N skipped (N)` (not `Test Files`) |
//! | mocha | `N passing`, `N failing`, `N pending` |
//! | bun test | `N pass`, `N fail`, `N skip`, `N todo` |
//! | deno test | `ok \| N passed \| N failed \| N ignored` / `FAILED \| …` |
//! | node --test, TAP | `# pass N`, `# fail N`, `# skipped N`, `# todo N`, `# cancelled N` (also with `ℹ`) |
//! | playwright | `N passed (1.2s)`, `N failed`, `N flaky` (passed), `N skipped`, `N did not run` (skipped), `N interrupted` (failed) |
//! | go test | `--- PASS/FAIL/SKIP: Name` lines, see below; `ok pkg` / `FAIL pkg` are packages |
//! | gotestsum | `DONE N tests, N skipped, N failures, N errors in 1.2s` |
//! | Maven surefire/failsafe | `Tests run: N, Failures: N, Errors: N, Skipped: N` totals (no `Time elapsed`), summed over modules; per-class lines only when no total came |
//! | Gradle | `N tests completed, N failed, N skipped`, summed over tasks |
//! | RSpec | `N examples, N failures, N pending` (`N errors occurred outside of examples`) |
//! | minitest | `N runs, N assertions, N failures, N errors, N skips` |
//! | PHPUnit | `Tests: N, Assertions: N, Errors: N, Failures: N, Skipped: N, Incomplete: N.` / `OK (N tests, N assertions)` |
//! | dotnet test | `Failed!  - Failed: N, Passed: N, Skipped: N, Total: N`, summed over assemblies |
//! | CTest | `N% tests passed, N tests failed out of N` |
//! | swift test | XCTest `Executed N tests, with N tests skipped and N failures`; Swift Testing `Test run with N tests passed/failed`, failures counted from `✘ Test name() failed` lines |
//! | zig test | `All N tests passed.`, `N passed; N skipped; N failed.`, `Build Summary: … N/N tests passed; N skipped; N failed` |
//!
//! Go prints no global summary. We count leaf tests: every `--- PASS/FAIL/SKIP: Name` line,
//! top level or indented subtest, except a test that has subtests of its own (a parent
//! fails when a subtest fails, so counting both would count one failure twice). Without
//! `-v`, go prints only failures, so passes are unknown and left at zero. Each name counts
//! once per package (`-count=N` repeats do not multiply).
//!
//! When several runners' summaries appear in one output, the runner of the last summary
//! wins. Counts from per-test lines are the fallback only when no summary line came.
//!
//! What this module does not do: decide that an output is a test run, or render the
//! counts; `reduce` does both.

use std::collections::{HashMap, HashSet};

/// The counts of a test run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tally {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed (each once, however often the runner lists it).
    pub failed: u64,
    /// Tests ignored, skipped, pending or todo.
    pub skipped: u64,
    /// Errors the runner counts apart from failures: collection and setup errors (pytest,
    /// unittest, RSpec), tests that errored rather than failed an assertion (JUnit, minitest,
    /// PHPUnit).
    pub errors: u64,
    /// The runner the counts come from: `cargo`, `cargo-nextest`, `pytest`, `unittest`,
    /// `jest`, `vitest`, `mocha`, `bun`, `deno`, `tap`, `playwright`, `go`, `gotestsum`,
    /// `maven`, `gradle`, `rspec`, `minitest`, `phpunit`, `dotnet`, `ctest`, `xctest`,
    /// `swift-testing`, `zig`.
    pub runner: &'static str,
}

impl Tally {
    /// The counts as facts, failures first (failed, errors, passed, skipped), zero counts
    /// left out. The skipped count is named as the runner names it (`ignored` for cargo and
    /// deno, `skipped` otherwise); errors are named `error`, singular, for the renderer to
    /// pluralize.
    ///
    /// ```
    /// use tj::reduce::shape::testrun::tally;
    ///
    /// let t = tally(&["test result: FAILED. 301 passed; 3 failed; 1 ignored; 0 measured"]);
    /// let facts = t.map(|t| t.facts()).unwrap_or_default();
    /// assert_eq!(facts, [("failed".into(), 3), ("passed".into(), 301), ("ignored".into(), 1)]);
    /// ```
    pub fn facts(&self) -> Vec<(String, u64)> {
        let skipped = match self.runner {
            "cargo" | "deno" => "ignored",
            _ => "skipped",
        };
        [
            ("failed", self.failed),
            ("error", self.errors),
            ("passed", self.passed),
            (skipped, self.skipped),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| (name.to_string(), n))
        .collect()
    }

    /// Every test the tally accounts for.
    pub fn total(&self) -> u64 {
        self.passed + self.failed + self.skipped + self.errors
    }
}

/// Counts the tests of a run from its rendered lines (ANSI already stripped), or returns
/// `None` when no line looks like a test runner's.
///
/// See the module documentation for each runner's lines and quirks.
///
/// ```
/// use tj::reduce::shape::testrun::tally;
///
/// let lines = [
///     "test result: FAILED. 301 passed; 3 failed; 1 ignored; 0 measured; 0 filtered out",
///     "test result: ok. 42 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
/// ];
/// let t = tally(&lines).unwrap();
/// assert_eq!((t.passed, t.failed, t.skipped, t.runner), (343, 3, 1, "cargo"));
/// ```
pub fn tally(lines: &[&str]) -> Option<Tally> {
    let mut scan = Scan::default();
    for line in lines {
        scan.line(line);
    }
    scan.finish()
}

/// How the summaries of one runner in one output combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// One summary per target, assembly or module: add them up.
    Sum,
    /// The last summary is the whole run (nested suites, a re-run in watch mode).
    Last,
    /// Each line carries one count (`301 passing`, `3 failing`): merge them.
    Merge,
}

/// Counts as a summary line states them; `None` is "not stated".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    passed: Option<u64>,
    failed: Option<u64>,
    skipped: Option<u64>,
    errors: Option<u64>,
    /// All tests, when the runner states a total and not the passes.
    total: Option<u64>,
}

impl Counts {
    fn add(a: Option<u64>, b: u64) -> Option<u64> {
        Some(a.unwrap_or(0).saturating_add(b))
    }

    /// The tally these counts stand for: passes derived from the total when not stated.
    fn resolve(&self, runner: &'static str) -> Tally {
        let failed = self.failed.unwrap_or(0);
        let skipped = self.skipped.unwrap_or(0);
        let errors = self.errors.unwrap_or(0);
        let passed = match (self.passed, self.total) {
            (Some(p), _) => p,
            (None, Some(t)) => t.saturating_sub(failed + skipped + errors),
            (None, None) => 0,
        };
        Tally { passed, failed, skipped, errors, runner }
    }

    fn sum(&mut self, other: &Counts) {
        for (a, b) in [
            (&mut self.passed, other.passed),
            (&mut self.failed, other.failed),
            (&mut self.skipped, other.skipped),
            (&mut self.errors, other.errors),
            (&mut self.total, other.total),
        ] {
            if let Some(b) = b {
                *a = Counts::add(*a, b);
            }
        }
    }

    fn merge(&mut self, other: &Counts) {
        for (a, b) in [
            (&mut self.passed, other.passed),
            (&mut self.failed, other.failed),
            (&mut self.skipped, other.skipped),
            (&mut self.errors, other.errors),
            (&mut self.total, other.total),
        ] {
            if b.is_some() {
                *a = b;
            }
        }
    }
}

/// A summary line: which runner, how its summaries combine, what it says.
#[derive(Clone, Copy, Debug)]
struct Summary {
    runner: &'static str,
    mode: Mode,
    counts: Counts,
}

/// Test names by outcome, each counted once. Kept as lists and deduplicated at the end:
/// a long passing run records a name per line, and a push is cheaper than a hash.
#[derive(Debug, Default)]
struct Names<'a> {
    passed: Vec<&'a str>,
    failed: Vec<&'a str>,
    skipped: Vec<&'a str>,
    errors: Vec<&'a str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Passed,
    Failed,
    Skipped,
    Error,
}

impl<'a> Names<'a> {
    fn record(&mut self, name: &'a str, outcome: Outcome) {
        match outcome {
            Outcome::Passed => self.passed.push(name),
            Outcome::Failed => self.failed.push(name),
            Outcome::Skipped => self.skipped.push(name),
            Outcome::Error => self.errors.push(name),
        }
    }

    fn clear(&mut self) {
        self.passed.clear();
        self.failed.clear();
        self.skipped.clear();
        self.errors.clear();
    }

    fn lines(&self) -> usize {
        self.passed.len() + self.failed.len() + self.skipped.len() + self.errors.len()
    }

    fn is_empty(&self) -> bool {
        self.passed.is_empty()
            && self.failed.is_empty()
            && self.skipped.is_empty()
            && self.errors.is_empty()
    }

    /// The tally, each name once, a failure winning over a pass or error of the same name
    /// (a retried test, a test failing in its body and erroring in its teardown).
    fn tally(&mut self, runner: &'static str) -> Tally {
        for list in [&mut self.passed, &mut self.failed, &mut self.skipped, &mut self.errors] {
            list.sort_unstable();
            list.dedup();
        }
        let failed = &self.failed;
        let not_failed = |n: &&&str| failed.binary_search(*n).is_err();
        Tally {
            passed: self.passed.iter().filter(not_failed).count() as u64,
            failed: self.failed.len() as u64,
            skipped: self.skipped.len() as u64,
            errors: self.errors.iter().filter(not_failed).count() as u64,
            runner,
        }
    }
}

/// Go's per-package results: (name, outcome), in order.
#[derive(Debug, Default)]
struct GoPackage<'a> {
    results: Vec<(&'a str, Outcome)>,
}

#[derive(Debug, Default)]
struct Scan<'a> {
    summaries: Vec<Summary>,
    /// Per-test lines of the cargo target since the last `test result:` line.
    cargo_pending: Names<'a>,
    /// Per-test lines by runner, for a run cut short before any summary.
    fallback: HashMap<&'static str, Names<'a>>,
    /// Maven per-class lines, for a build cut short before its `Results:` totals.
    maven_classes: Counts,
    maven_class_lines: usize,
    /// `Ran N tests` awaiting unittest's `OK` / `FAILED (…)` line.
    unittest_ran: Option<u64>,
    /// Swift Testing's failed and skipped test names.
    swift_failed: HashSet<&'a str>,
    swift_skipped: HashSet<&'a str>,
    go_done: Vec<GoPackage<'a>>,
    go_current: GoPackage<'a>,
}

impl<'a> Scan<'a> {
    fn summary(&mut self, runner: &'static str, mode: Mode, counts: Counts) {
        self.summaries.push(Summary { runner, mode, counts });
    }

    fn line(&mut self, raw: &'a str) {
        let t = raw.trim();
        // A passing cargo test, most lines of a run, is recorded before any other look at
        // the line (`cargo` reads cargo's other lines).
        if let Some(name) = t.strip_prefix("test ").and_then(|rest| rest.strip_suffix(" ... ok"))
            && !t.starts_with("test result: ")
        {
            self.cargo_pending.record(name, Outcome::Passed);
            return;
        }
        // Every summary line but unittest's `OK` holds a digit, and every per-test line
        // `...`, `::`, `--- ` or a glyph; most lines of a log hold none of them.
        let candidate = t.bytes().any(|b| b.is_ascii_digit() || b >= 0x80 || b == b'.')
            || t.contains("--- ")
            || t.contains("::")
            || t == "OK";
        if t.is_empty() || !candidate {
            return;
        }
        if self.cargo(t) || self.go(raw, t) || self.summaries_of(t) {
            return;
        }
        self.per_test(t);
    }

    /// cargo's `test result:` and `test name ... ok|FAILED|ignored` lines.
    fn cargo(&mut self, t: &'a str) -> bool {
        if let Some(rest) = t.strip_prefix("test result: ") {
            let mut c = Counts::default();
            for (n, word) in pairs(rest) {
                if word.starts_with("passed") {
                    c.passed = Some(n);
                } else if word.starts_with("failed") {
                    c.failed = Some(n);
                } else if word.starts_with("ignored") {
                    c.skipped = Some(n);
                }
            }
            self.summary("cargo", Mode::Sum, c);
            self.cargo_pending.clear();
            return true;
        }
        let Some(rest) = t.strip_prefix("test ") else {
            return false;
        };
        let Some((name, status)) = rest.split_once(" ... ") else {
            return false;
        };
        let outcome = if status == "ok" {
            Outcome::Passed
        } else if status.starts_with("FAILED") {
            Outcome::Failed
        } else if status.starts_with("ignored") {
            Outcome::Skipped
        } else {
            return false;
        };
        self.cargo_pending.record(name, outcome);
        true
    }

    /// go's `--- PASS/FAIL/SKIP: Name (0.00s)` result lines and package lines.
    fn go(&mut self, raw: &str, t: &'a str) -> bool {
        if let Some(rest) = t.strip_prefix("--- ") {
            let (outcome, rest) = if let Some(r) = rest.strip_prefix("PASS: ") {
                (Outcome::Passed, r)
            } else if let Some(r) = rest.strip_prefix("FAIL: ") {
                (Outcome::Failed, r)
            } else if let Some(r) = rest.strip_prefix("SKIP: ") {
                (Outcome::Skipped, r)
            } else {
                return false;
            };
            let name = rest.split(' ').next().unwrap_or(rest);
            self.go_current.results.push((name, outcome));
            return true;
        }
        // A package line ends the package's results: `ok  \tpkg\t0.01s`, `FAIL\tpkg\t…`,
        // `?   \tpkg\t[no test files]`. A bare `FAIL` / `PASS` line does not.
        let mut words = raw.split_whitespace();
        let is_package = matches!(words.next(), Some("ok" | "FAIL" | "?"))
            && !raw.starts_with(char::is_whitespace)
            && words.next().is_some();
        if is_package && !self.go_current.results.is_empty() {
            self.go_done.push(std::mem::take(&mut self.go_current));
        }
        // Not consumed: deno's `ok | 3 passed | …` looks like a package line too.
        false
    }

    /// Every runner's summary lines but cargo's: each runner's reader in turn, until one
    /// claims the line (and says whether it consumed it).
    fn summaries_of(&mut self, t: &'a str) -> bool {
        let Some(&first) = t.as_bytes().first() else {
            return false;
        };
        if first.is_ascii_digit() {
            return self.numbered(t);
        }
        self.nextest(t)
            .or_else(|| self.pytest(t))
            .or_else(|| self.unittest(t))
            .or_else(|| self.jest_vitest(t))
            .or_else(|| self.deno(t))
            .or_else(|| self.tap(t))
            .or_else(|| self.gotestsum(t))
            .or_else(|| self.maven(t))
            .or_else(|| self.dotnet(t))
            .or_else(|| self.phpunit_ok(t))
            .or_else(|| self.xctest(t))
            .or_else(|| self.swift_testing(t))
            .or_else(|| self.zig(t))
            .unwrap_or(false)
    }

    /// cargo-nextest's `Summary [ 1.2s] 12 tests run: 11 passed, 1 failed`. `None` if the line is none of these.
    fn nextest(&mut self, t: &'a str) -> Option<bool> {
        if let Some(rest) = t.strip_prefix("Summary [")
            && let Some((_, counts)) = rest.split_once("tests run:")
        {
            let mut c = Counts::default();
            let total = rest.split_once(']').and_then(|(_, r)| pairs(r).next()).map(|(n, _)| n);
            for (n, word) in pairs(counts) {
                if word.starts_with("passed") {
                    c.passed = Some(n);
                } else if word.starts_with("failed") || word.starts_with("timed out") {
                    c.failed = Counts::add(c.failed, n);
                } else if word.starts_with("skipped") {
                    c.skipped = Some(n);
                }
            }
            c.total = total;
            self.summary("cargo-nextest", Mode::Last, c);
            return Some(true);
        }
        None
    }

    /// pytest's `==== 3 failed, 12 passed in 0.5s ====`. `None` if the line is none of these.
    fn pytest(&mut self, t: &'a str) -> Option<bool> {
        if t.starts_with('=') && t.ends_with('=') {
            let inner = t.trim_matches('=').trim();
            if let Some(c) = pytest_counts(inner) {
                self.summary("pytest", Mode::Last, c);
                return Some(true);
            }
            return Some(false);
        }
        None
    }

    /// unittest's `Ran 12 tests` and the `OK` / `FAILED (failures=1)` after it; bun's `Ran … across …`. `None` if the line is none of these.
    fn unittest(&mut self, t: &'a str) -> Option<bool> {
        if let Some(rest) = t.strip_prefix("Ran ") {
            if rest.contains(" across ") {
                return Some(true); // bun's `Ran 305 tests across 5 files.`: its counts come apart
            }
            if let Some((n, word)) = pairs(rest).next()
                && word.starts_with("test")
            {
                self.unittest_ran = Some(n);
                return Some(true);
            }
            return Some(false);
        }
        if let Some(ran) = self.unittest_ran
            && (t == "OK" || t.starts_with("OK (") || t.starts_with("FAILED ("))
        {
            let mut c = Counts { total: Some(ran), ..Counts::default() };
            let list = t.split_once('(').map_or("", |(_, l)| l.trim_end_matches(')'));
            for item in list.split(", ") {
                let Some((key, n)) = item.split_once('=') else { continue };
                let Ok(n) = n.parse::<u64>() else { continue };
                match key {
                    "failures" | "unexpected successes" => c.failed = Counts::add(c.failed, n),
                    "errors" => c.errors = Some(n),
                    "skipped" | "expected failures" => c.skipped = Counts::add(c.skipped, n),
                    _ => {}
                }
            }
            self.unittest_ran = None;
            self.summary("unittest", Mode::Last, c);
            return Some(true);
        }
        None
    }

    /// jest's `Tests: 1 failed, 12 passed, 13 total` (phpunit's, with `Assertions:`), vitest's `Tests  1 failed | 12 passed`. `None` if the line is none of these.
    fn jest_vitest(&mut self, t: &'a str) -> Option<bool> {
        if let Some(rest) = t.strip_prefix("Tests:") {
            if t.contains("Assertions:") {
                return Some(self.phpunit(t));
            }
            let mut c = Counts::default();
            let mut any = false;
            for (n, word) in pairs(rest) {
                any = true;
                if word.starts_with("passed") {
                    c.passed = Some(n);
                } else if word.starts_with("failed") {
                    c.failed = Some(n);
                } else if word.starts_with("skipped") || word.starts_with("todo") {
                    c.skipped = Counts::add(c.skipped, n);
                } else if word.starts_with("total") {
                    c.total = Some(n);
                }
            }
            if any {
                self.summary("jest", Mode::Last, c);
            }
            return Some(any);
        }
        if let Some(rest) = t.strip_prefix("Tests ") {
            let mut c = Counts::default();
            let mut any = false;
            for (n, word) in pairs(rest) {
                if word.starts_with("passed") {
                    c.passed = Some(n);
                } else if word.starts_with("failed") {
                    c.failed = Some(n);
                } else if word.starts_with("skipped") || word.starts_with("todo") {
                    c.skipped = Counts::add(c.skipped, n);
                } else {
                    continue;
                }
                any = true;
            }
            if any {
                self.summary("vitest", Mode::Last, c);
            }
            return Some(any);
        }
        None
    }

    /// deno's `ok | 12 passed | 0 failed`. `None` if the line is none of these.
    fn deno(&mut self, t: &'a str) -> Option<bool> {
        if t.starts_with("ok | ") || t.starts_with("FAILED | ") {
            let mut c = Counts::default();
            for part in t.split(" | ").skip(1) {
                if let Some((n, word)) = pairs(part).next() {
                    if word.starts_with("passed") {
                        c.passed = Some(n);
                    } else if word.starts_with("failed") {
                        c.failed = Some(n);
                    } else if word.starts_with("ignored") {
                        c.skipped = Some(n);
                    }
                }
            }
            self.summary("deno", Mode::Last, c);
            return Some(true);
        }
        None
    }

    /// TAP's and node's `# pass 12` / `ℹ fail 1` lines, merged. `None` if the line is none of these.
    fn tap(&mut self, t: &'a str) -> Option<bool> {
        if let Some(rest) = t.strip_prefix("# ").or_else(|| t.strip_prefix("ℹ ")) {
            let mut words = rest.split_whitespace();
            if let (Some(word), Some(n), None) = (words.next(), words.next(), words.next())
                && let Ok(n) = n.parse::<u64>()
            {
                let mut c = Counts::default();
                match word {
                    "tests" => c.total = Some(n),
                    "pass" => c.passed = Some(n),
                    "fail" | "cancelled" => c.failed = Some(n),
                    "skipped" | "skip" | "todo" => c.skipped = Some(n),
                    _ => return Some(false),
                }
                self.merged("tap", c);
                return Some(true);
            }
            return Some(false);
        }
        None
    }

    /// gotestsum's `DONE 12 tests, 1 failure`. `None` if the line is none of these.
    fn gotestsum(&mut self, t: &'a str) -> Option<bool> {
        if let Some(rest) = t.strip_prefix("DONE ") {
            let mut c = Counts::default();
            for (n, word) in pairs(rest) {
                if word.starts_with("tests") || word.starts_with("test ") || word == "test" {
                    c.total = Some(n);
                } else if word.starts_with("skipped") {
                    c.skipped = Some(n);
                } else if word.starts_with("failure") {
                    c.failed = Some(n);
                }
            }
            if c.total.is_some() {
                self.summary("gotestsum", Mode::Last, c);
                return Some(true);
            }
            return Some(false);
        }
        None
    }

    /// Maven's and Gradle's `Tests run: 12, Failures: 1, …` (per class with `Time elapsed`). `None` if the line is none of these.
    fn maven(&mut self, t: &'a str) -> Option<bool> {
        let unbracketed = strip_maven_level(t);
        if let Some(rest) = unbracketed.strip_prefix("Tests run:") {
            let c = Counts {
                total: keyed(rest, ""),
                failed: keyed(unbracketed, "Failures:"),
                errors: keyed(unbracketed, "Errors:"),
                skipped: keyed(unbracketed, "Skipped:"),
                passed: None,
            };
            if unbracketed.contains("Time elapsed") {
                self.maven_classes.sum(&c);
                self.maven_class_lines += 1;
            } else {
                self.summary("maven", Mode::Sum, c);
            }
            return Some(true);
        }
        None
    }

    /// dotnet's `Failed! - Failed: 1, Passed: 11, Skipped: 0, Total: 12`. `None` if the line is none of these.
    fn dotnet(&mut self, t: &'a str) -> Option<bool> {
        if (t.starts_with("Failed!") || t.starts_with("Passed!"))
            && t.contains("Total:")
            && let Some(total) = keyed(t, "Total:")
        {
            let c = Counts {
                passed: keyed(t, "Passed:"),
                failed: keyed(t, "Failed:"),
                skipped: keyed(t, "Skipped:"),
                errors: None,
                total: Some(total),
            };
            self.summary("dotnet", Mode::Sum, c);
            return Some(true);
        }
        None
    }

    /// phpunit's `OK (12 tests, 30 assertions)`. `None` if the line is none of these.
    fn phpunit_ok(&mut self, t: &'a str) -> Option<bool> {
        if t.starts_with("OK (") && t.contains(" tests, ") || t.starts_with("OK (1 test, ") {
            if let Some((n, _)) = pairs(&t[4..]).next() {
                let c = Counts { passed: Some(n), ..Counts::default() };
                self.summary("phpunit", Mode::Last, c);
                return Some(true);
            }
            return Some(false);
        }
        None
    }

    /// XCTest's `Executed 12 tests, with 1 failure`. `None` if the line is none of these.
    fn xctest(&mut self, t: &'a str) -> Option<bool> {
        if let Some(rest) = t.strip_prefix("Executed ")
            && let Some((n, word)) = pairs(rest).next()
            && word.starts_with("test")
        {
            let mut c = Counts { total: Some(n), ..Counts::default() };
            for (k, word) in pairs(rest).skip(1) {
                if word.starts_with("failure") {
                    c.failed = Some(k);
                } else if word.starts_with("test") && word.contains("skipped") {
                    c.skipped = Some(k);
                }
            }
            self.summary("xctest", Mode::Last, c);
            return Some(true);
        }
        None
    }

    /// swift-testing's `✘ Test run with 12 tests …`, and its failed and skipped tests by name. `None` if the line is none of these.
    fn swift_testing(&mut self, t: &'a str) -> Option<bool> {
        if let Some(rest) = t.strip_prefix("✘ Test ").or_else(|| t.strip_prefix("✔ Test ")) {
            if let Some(rest) = rest.strip_prefix("run with ") {
                if let Some((n, _)) = pairs(rest).next() {
                    let c = Counts { total: Some(n), ..Counts::default() };
                    self.summary("swift-testing", Mode::Last, c);
                    return Some(true);
                }
            } else if t.starts_with('✘')
                && let Some((name, _)) = rest.split_once(" failed")
            {
                self.swift_failed.insert(name);
                return Some(true);
            }
            return Some(false);
        }
        if let Some(rest) = t.strip_prefix("➜ Test ")
            && let Some((name, _)) = rest.split_once(" skipped")
        {
            self.swift_skipped.insert(name);
            return Some(true);
        }
        None
    }

    /// zig's `All 12 tests passed.` and `Build Summary: … 11/12 tests passed; 1 failed`. `None` if the line is none of these.
    fn zig(&mut self, t: &'a str) -> Option<bool> {
        if let Some(rest) = t.strip_prefix("All ")
            && let Some((n, word)) = pairs(rest).next()
            && (word == "tests passed." || word == "test passed.")
        {
            self.summary("zig", Mode::Last, Counts { passed: Some(n), ..Counts::default() });
            return Some(true);
        }
        if let Some(pos) = t.find(" tests passed; ")
            && t.starts_with("Build Summary:")
        {
            let before = &t[..pos];
            let Some((done, total)) = before.rsplit(' ').next().and_then(|f| f.split_once('/'))
            else {
                return Some(false);
            };
            let mut c = Counts {
                passed: done.parse().ok(),
                total: total.parse().ok(),
                ..Counts::default()
            };
            zig_rest(&t[pos..], &mut c);
            self.summary("zig", Mode::Last, c);
            return Some(true);
        }
        None
    }

    /// Summary lines that start with a number.
    fn numbered(&mut self, t: &str) -> bool {
        let mut it = pairs(t);
        let Some((n, word)) = it.next() else {
            return false;
        };
        // pytest -q prints its summary without the `=` rules.
        if let Some(c) = pytest_counts(t) {
            self.summary("pytest", Mode::Last, c);
            return true;
        }
        let alone = |w: &str, key: &str| {
            w == key || w.strip_prefix(key).is_some_and(|r| r.starts_with(" (") && r.ends_with(')'))
        };
        for (key, runner, set) in [
            ("passing", "mocha", Outcome::Passed),
            ("failing", "mocha", Outcome::Failed),
            ("pending", "mocha", Outcome::Skipped),
            ("pass", "bun", Outcome::Passed),
            ("fail", "bun", Outcome::Failed),
            ("skip", "bun", Outcome::Skipped),
            ("todo", "bun", Outcome::Skipped),
            ("passed", "playwright", Outcome::Passed),
            ("flaky", "playwright", Outcome::Passed),
            ("failed", "playwright", Outcome::Failed),
            ("interrupted", "playwright", Outcome::Failed),
            ("skipped", "playwright", Outcome::Skipped),
            ("did not run", "playwright", Outcome::Skipped),
        ] {
            if alone(word, key) {
                let mut c = Counts::default();
                let slot = match set {
                    Outcome::Passed => &mut c.passed,
                    Outcome::Failed => &mut c.failed,
                    _ => &mut c.skipped,
                };
                *slot = Some(n);
                self.merged(runner, c);
                return true;
            }
        }
        if word.starts_with("tests completed") || word.starts_with("test completed") {
            let c = counts_after(n, it, &[("failed", Field::Failed), ("skipped", Field::Skipped)]);
            self.summary("gradle", Mode::Sum, c);
            return true;
        }
        if word.starts_with("example") {
            let keys =
                [("failure", Field::Failed), ("pending", Field::Skipped), ("error", Field::Errors)];
            let mut c = counts_after(n, it, &keys);
            // Errors outside examples are not examples: keep them out of the passes.
            c.passed = Some(n.saturating_sub(c.failed.unwrap_or(0) + c.skipped.unwrap_or(0)));
            self.summary("rspec", Mode::Last, c);
            return true;
        }
        if word.starts_with("runs,") || word.starts_with("run,") {
            let keys =
                [("failure", Field::Failed), ("error", Field::Errors), ("skip", Field::Skipped)];
            self.summary("minitest", Mode::Last, counts_after(n, it, &keys));
            return true;
        }
        if word.starts_with("% tests passed") || word.starts_with("tests passed,") {
            // `97% tests passed, 3 tests failed out of 100`: pairs saw `97` before the `%`.
            return self.ctest(t);
        }
        if word.starts_with("passed;") || word.starts_with("passed; ") {
            let mut c = Counts { passed: Some(n), ..Counts::default() };
            zig_rest(t, &mut c);
            self.summary("zig", Mode::Last, c);
            return true;
        }
        false
    }

    fn ctest(&mut self, t: &str) -> bool {
        let Some(pos) = t.find(" failed out of ") else {
            return false;
        };
        let failed = t[..pos].rsplit(' ').nth(1).and_then(|n| n.parse().ok());
        let total = pairs(&t[pos..])
            .next()
            .map(|(n, _)| n)
            .or_else(|| t[pos + " failed out of ".len()..].trim().parse().ok());
        let c = Counts { failed, total, ..Counts::default() };
        self.summary("ctest", Mode::Last, c);
        true
    }

    fn phpunit(&mut self, t: &str) -> bool {
        let c = Counts {
            total: keyed(t, "Tests:"),
            failed: keyed(t, "Failures:"),
            errors: keyed(t, "Errors:"),
            skipped: Some(keyed(t, "Skipped:").unwrap_or(0) + keyed(t, "Incomplete:").unwrap_or(0)),
            passed: None,
        };
        self.summary("phpunit", Mode::Last, c);
        true
    }

    /// A count of a runner that prints one count per line, added to the runner's block of
    /// count lines when that is the latest summary, else starting a new block. Added, not
    /// set: two words may feed one field (`skip` and `todo`, `passed` and `flaky`).
    fn merged(&mut self, runner: &'static str, c: Counts) {
        match self.summaries.last_mut() {
            Some(s) if s.runner == runner && s.mode == Mode::Merge => s.counts.sum(&c),
            _ => self.summary(runner, Mode::Merge, c),
        }
    }

    /// Per-test lines of runners whose summary may be missing.
    fn per_test(&mut self, t: &'a str) {
        // pytest short summary: `FAILED tests/a.py::t - msg`, `ERROR tests/a.py::t - msg`.
        for (prefix, outcome) in [("FAILED ", Outcome::Failed), ("ERROR ", Outcome::Error)] {
            if let Some(rest) = t.strip_prefix(prefix)
                && rest.contains("::")
            {
                let name = rest.split_once(" - ").map_or(rest, |(n, _)| n).trim_end();
                self.fallback.entry("pytest").or_default().record(name, outcome);
                return;
            }
        }
        // pytest -v: `tests/a.py::t PASSED   [ 50%]`.
        if t.contains("::") {
            for (status, outcome) in [
                (" PASSED", Outcome::Passed),
                (" FAILED", Outcome::Failed),
                (" ERROR", Outcome::Error),
                (" SKIPPED", Outcome::Skipped),
                (" XFAIL", Outcome::Skipped),
                (" XPASS", Outcome::Passed),
            ] {
                if let Some(pos) = t.rfind(status) {
                    let name = t[..pos].trim_end();
                    if name.contains("::") && !name.contains(' ') || name.ends_with(']') {
                        self.fallback.entry("pytest").or_default().record(name, outcome);
                        return;
                    }
                }
            }
        }
        // cargo-nextest: `FAIL [   0.003s] crate::name`.
        for (prefix, outcome) in
            [("PASS [", Outcome::Passed), ("FAIL [", Outcome::Failed), ("SKIP [", Outcome::Skipped)]
        {
            if let Some(rest) = t.strip_prefix(prefix)
                && let Some((_, name)) = rest.split_once("] ")
            {
                self.fallback.entry("cargo-nextest").or_default().record(name.trim(), outcome);
                return;
            }
        }
        // jest and vitest: `✕ name (4 ms)`, `× suite > name 9ms`.
        if let Some(rest) = t.strip_prefix("✕ ").or_else(|| t.strip_prefix("× ")) {
            let name = strip_duration(rest.trim());
            let runner = if t.starts_with('✕') { "jest" } else { "vitest" };
            self.fallback.entry(runner).or_default().record(name, Outcome::Failed);
        }
    }

    fn finish(mut self) -> Option<Tally> {
        if let Some(last) = self.summaries.last() {
            let runner = last.runner;
            let mode = last.mode;
            let mut counts = Counts::default();
            match mode {
                Mode::Last => counts = last.counts,
                Mode::Sum | Mode::Merge => {
                    for s in self.summaries.iter().filter(|s| s.runner == runner) {
                        if mode == Mode::Sum {
                            counts.sum(&s.counts);
                        } else {
                            counts.merge(&s.counts);
                        }
                    }
                }
            }
            let mut tally = counts.resolve(runner);
            if runner == "cargo" {
                // The target running when the output stopped has no `test result:` line.
                let pending = self.cargo_pending.tally(runner);
                tally.passed += pending.passed;
                tally.failed += pending.failed;
                tally.skipped += pending.skipped;
            }
            if runner == "swift-testing" {
                tally.failed = self.swift_failed.len() as u64;
                tally.skipped = self.swift_skipped.len() as u64;
                tally.passed =
                    counts.total.unwrap_or(0).saturating_sub(tally.failed + tally.skipped);
            }
            return Some(tally);
        }
        if self.maven_class_lines > 0 {
            return Some(self.maven_classes.resolve("maven"));
        }
        if !self.go_current.results.is_empty() {
            self.go_done.push(std::mem::take(&mut self.go_current));
        }
        if !self.go_done.is_empty() {
            return Some(go_tally(&self.go_done));
        }
        if !self.cargo_pending.is_empty() {
            let pending = std::mem::take(&mut self.cargo_pending);
            self.fallback.insert("cargo", pending);
        }
        // The runner with the most per-test lines; ties go to the name, for determinism.
        let (runner, mut names) = self
            .fallback
            .into_iter()
            .filter(|(_, n)| !n.is_empty())
            .max_by(|a, b| a.1.lines().cmp(&b.1.lines()).then(b.0.cmp(a.0)))?;
        Some(names.tally(runner))
    }
}

/// Go's leaf tests over all packages: a test with subtests of its own is not counted.
fn go_tally(packages: &[GoPackage<'_>]) -> Tally {
    let mut tally = Tally { runner: "go", ..Tally::default() };
    for package in packages {
        let mut parents: HashSet<&str> = HashSet::new();
        for &(name, _) in &package.results {
            let mut rest = name;
            while let Some((parent, _)) = rest.rsplit_once('/') {
                parents.insert(parent);
                rest = parent;
            }
        }
        let mut seen: HashSet<&str> = HashSet::new();
        for &(name, outcome) in &package.results {
            if parents.contains(name) || !seen.insert(name) {
                continue;
            }
            match outcome {
                Outcome::Passed => tally.passed += 1,
                Outcome::Failed | Outcome::Error => tally.failed += 1,
                Outcome::Skipped => tally.skipped += 1,
            }
        }
    }
    tally
}

/// pytest's `3 failed, 301 passed, 1 skipped, 2 errors in 2.10s` (without the rules), or
/// `None` when `s` is not exactly that.
fn pytest_counts(s: &str) -> Option<Counts> {
    let (list, time) = s.rsplit_once(" in ")?;
    if !time.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut c = Counts::default();
    let mut any = false;
    for part in list.split(", ") {
        let (n, word) = part.split_once(' ')?;
        let n: u64 = n.parse().ok()?;
        match word {
            "passed" | "xpassed" => c.passed = Counts::add(c.passed, n),
            "failed" => c.failed = Some(n),
            "skipped" | "xfailed" => c.skipped = Counts::add(c.skipped, n),
            "error" | "errors" => c.errors = Some(n),
            "warning" | "warnings" | "deselected" | "rerun" | "reruns" => {}
            _ => return None,
        }
        any = true;
    }
    any.then_some(c)
}

/// The `N skipped; N failed` after zig's passes.
fn zig_rest(s: &str, c: &mut Counts) {
    for (n, word) in pairs(s) {
        if word.starts_with("skipped") {
            c.skipped = Some(n);
        } else if word.starts_with("failed") {
            c.failed = Some(n);
        }
    }
}

/// Maven's log level prefix (`[INFO] `, `[ERROR] `, `[WARNING] `), removed.
fn strip_maven_level(t: &str) -> &str {
    if t.starts_with('[')
        && let Some((level, rest)) = t.split_once("] ")
        && level[1..].bytes().all(|b| b.is_ascii_uppercase())
    {
        return rest.trim_start();
    }
    t
}

/// `test name (12 ms)` / `suite > name 9ms` without its duration.
fn strip_duration(s: &str) -> &str {
    if s.ends_with(')')
        && let Some(pos) = s.rfind(" (")
        && s[pos + 2..].starts_with(|c: char| c.is_ascii_digit())
    {
        return &s[..pos];
    }
    if let Some((head, last)) = s.rsplit_once(' ')
        && last.ends_with("ms")
        && last[..last.len() - 2].bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && last.len() > 2
    {
        return head;
    }
    s
}

/// A count of [`Counts`] other than the passes and the total.
#[derive(Clone, Copy)]
enum Field {
    Failed,
    Skipped,
    Errors,
}

/// The counts of a summary that states its total (`n`) first: each later number, from
/// `rest` ([`pairs`]), goes to the field of the first of `keys` its word starts with, and a
/// number whose word starts with none of them is not counted.
fn counts_after<'a>(
    n: u64,
    rest: impl Iterator<Item = (u64, &'a str)>,
    keys: &[(&str, Field)],
) -> Counts {
    let mut c = Counts { total: Some(n), ..Counts::default() };
    for (k, word) in rest {
        if let Some((_, field)) = keys.iter().find(|(key, _)| word.starts_with(key)) {
            let slot = match field {
                Field::Failed => &mut c.failed,
                Field::Skipped => &mut c.skipped,
                Field::Errors => &mut c.errors,
            };
            *slot = Some(k);
        }
    }
    c
}

/// Each whole number in `s` that starts a word and is followed by a space, `%`, `,` or the
/// end (not the `1` or `5` of `1.5s`, not the `2` of `v2`), with the text after it, spaces
/// skipped: `3 failed, 1 skipped` gives `(3, "failed, 1 skipped")` and `(1, "skipped")`.
fn pairs(s: &str) -> impl Iterator<Item = (u64, &str)> {
    let b = s.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            if !b[i].is_ascii_digit()
                || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.'))
            {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let end = i;
            if b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(u8::is_ascii_digit) {
                continue;
            }
            let Ok(n) = s[start..end].parse::<u64>() else {
                continue;
            };
            let mut k = end;
            while k < b.len() && b[k] == b' ' {
                k += 1;
            }
            if k == end && b.get(end) != Some(&b'%') && end < b.len() && b[end] != b',' {
                continue;
            }
            return Some((n, &s[k..]));
        }
        None
    })
}

/// The number right after the first `key` in `s` (`Failures: 3`, `failures=2`).
fn keyed(s: &str, key: &str) -> Option<u64> {
    let pos = s.find(key)?;
    let rest = s[pos + key.len()..].trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> Option<Tally> {
        let lines: Vec<&str> = text.lines().collect();
        tally(&lines)
    }

    /// (runner, passed, failed, skipped, errors)
    type Counted = (&'static str, u64, u64, u64, u64);

    fn counts(text: &str) -> Counted {
        let tally = t(text).unwrap_or_else(|| panic!("no tally for {text:?}"));
        (tally.runner, tally.passed, tally.failed, tally.skipped, tally.errors)
    }

    #[test]
    fn cargo_targets_are_summed() {
        let text = "\
running 305 tests
test a ... ok
test result: FAILED. 301 passed; 3 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s

running 42 tests
test result: ok. 42 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests x

running 2 tests
test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        assert_eq!(counts(text), ("cargo", 345, 3, 1, 0));
        let facts = t(text).map(|t| t.facts()).unwrap_or_default();
        assert_eq!(
            facts,
            vec![
                ("failed".to_string(), 3),
                ("passed".to_string(), 345),
                ("ignored".to_string(), 1)
            ]
        );
    }

    #[test]
    fn cargo_failure_listed_twice_counts_once() {
        // Cut short: no `test result:` line, the failure in the body and the list.
        let text = "\
running 3 tests
test a::one ... ok
test a::two ... FAILED
test a::three ... ignored, slow

failures:

---- a::two stdout ----
thread 'a::two' panicked at src/a.rs:1:1:
boom

failures:
    a::two
test a::two ... FAILED
";
        assert_eq!(counts(text), ("cargo", 1, 1, 1, 0));
    }

    #[test]
    fn cargo_last_target_cut_short_adds_its_lines() {
        let text = "\
test result: ok. 10 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out
running 3 tests
test b::one ... ok
test b::two ... FAILED
";
        assert_eq!(counts(text), ("cargo", 11, 1, 0, 0));
    }

    #[test]
    fn nextest() {
        let text = "        FAIL [   0.004s] x::tests::a\n     Summary [   1.234s] 305 tests run: 301 passed, 3 failed, 1 skipped";
        assert_eq!(counts(text), ("cargo-nextest", 301, 3, 1, 0));
        let text = "     Summary [   0.010s] 5 tests run: 3 passed (1 slow), 1 failed, 1 timed out, 0 skipped";
        assert_eq!(counts(text), ("cargo-nextest", 3, 2, 0, 0));
    }

    #[test]
    fn pytest() {
        let text = "FAILED tests/a.py::t - AssertionError\n===== 3 failed, 301 passed, 1 skipped, 2 errors, 5 warnings in 2.10s =====";
        assert_eq!(counts(text), ("pytest", 301, 3, 1, 2));
        let text = "==== 1 failed, 10 passed, 2 xfailed, 1 xpassed, 6 deselected in 0.5s ====";
        assert_eq!(counts(text), ("pytest", 11, 1, 2, 0));
        assert_eq!(counts("3 failed, 301 passed in 0.12s"), ("pytest", 301, 3, 0, 0));
        assert_eq!(counts("=== 12 passed in 0.03s ==="), ("pytest", 12, 0, 0, 0));
    }

    #[test]
    fn pytest_failure_listed_twice_counts_once() {
        let text = "\
tests/a.py::test_one PASSED                       [ 33%]
tests/a.py::test_two FAILED                       [ 66%]
tests/a.py::test_p[a b] FAILED                    [100%]
=== FAILURES ===
___ test_two ___
=== short test summary info ===
FAILED tests/a.py::test_two - assert 1 == 2
FAILED tests/a.py::test_p[a b] - assert 0
";
        assert_eq!(counts(text), ("pytest", 1, 2, 0, 0));
    }

    #[test]
    fn unittest() {
        let text = "Ran 305 tests in 0.123s\n\nFAILED (failures=2, errors=1, skipped=1)";
        assert_eq!(counts(text), ("unittest", 301, 2, 1, 1));
        assert_eq!(counts("Ran 12 tests in 0.001s\n\nOK"), ("unittest", 12, 0, 0, 0));
        assert_eq!(counts("Ran 1 test in 0.001s\n\nOK (skipped=1)"), ("unittest", 0, 0, 1, 0));
    }

    #[test]
    fn jest_counts_tests_not_suites() {
        let text = "Test Suites: 1 failed, 8 passed, 9 total\nTests:       3 failed, 1 skipped, 1 todo, 301 passed, 306 total\nSnapshots:   0 total";
        assert_eq!(counts(text), ("jest", 301, 3, 2, 0));
    }

    #[test]
    fn vitest() {
        let text = " Test Files  1 failed | 6 passed (7)\n      Tests  3 failed | 301 passed | 1 skipped (305)";
        assert_eq!(counts(text), ("vitest", 301, 3, 1, 0));
        assert_eq!(counts("      Tests  240 passed (240)"), ("vitest", 240, 0, 0, 0));
    }

    #[test]
    fn mocha() {
        let text = "  301 passing (2s)\n  1 pending\n  3 failing\n\n  1) suite\n       fails:\n";
        assert_eq!(counts(text), ("mocha", 301, 3, 1, 0));
    }

    #[test]
    fn bun() {
        let text = " 301 pass\n 1 skip\n 1 todo\n 3 fail\n 400 expect() calls\nRan 305 tests across 5 files. [2.00s]";
        assert_eq!(counts(text), ("bun", 301, 3, 2, 0));
    }

    #[test]
    fn deno() {
        assert_eq!(counts("ok | 301 passed | 0 failed | 1 ignored (2s)"), ("deno", 301, 0, 1, 0));
        assert_eq!(counts("FAILED | 301 passed (4 steps) | 3 failed (2s)"), ("deno", 301, 3, 0, 0));
    }

    #[test]
    fn node_test_and_tap() {
        let text = "# tests 305\n# suites 3\n# pass 301\n# fail 3\n# cancelled 0\n# skipped 1\n# todo 0\n# duration_ms 120";
        assert_eq!(counts(text), ("tap", 301, 3, 1, 0));
        let text = "ℹ tests 5\nℹ pass 4\nℹ fail 1\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0";
        assert_eq!(counts(text), ("tap", 4, 1, 0, 0));
    }

    #[test]
    fn playwright() {
        let text = "  3 failed\n    [chromium] › a.spec.ts:3:5 › logs in\n  1 flaky\n  1 skipped\n  301 passed (12.3s)";
        assert_eq!(counts(text), ("playwright", 302, 3, 1, 0));
    }

    #[test]
    fn go_counts_leaf_tests_once() {
        let text = "\
=== RUN   TestA
--- FAIL: TestA (0.00s)
    --- PASS: TestA/one (0.00s)
    --- FAIL: TestA/two (0.00s)
        --- FAIL: TestA/two/deep (0.00s)
--- PASS: TestB (0.00s)
--- SKIP: TestC (0.00s)
FAIL
FAIL\texample.com/x\t0.003s
--- PASS: TestB (0.00s)
ok  \texample.com/y\t0.001s
";
        // Leaves: TestA/one, TestA/two/deep, TestB (x), TestC, TestB (y).
        assert_eq!(counts(text), ("go", 3, 1, 1, 0));
    }

    #[test]
    fn gotestsum() {
        assert_eq!(
            counts("DONE 305 tests, 1 skipped, 3 failures in 2.1s"),
            ("gotestsum", 301, 3, 1, 0)
        );
        assert_eq!(counts("DONE 12 tests in 0.5s"), ("gotestsum", 12, 0, 0, 0));
    }

    #[test]
    fn maven_uses_the_totals_not_the_class_lines() {
        let text = "\
[INFO] Running com.x.ATest
[ERROR] Tests run: 5, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! - in com.x.ATest
[INFO] Tests run: 300, Failures: 2, Errors: 0, Skipped: 1, Time elapsed: 1.2 s - in com.x.BTest
[INFO]
[INFO] Results:
[INFO]
[ERROR] Failures:
[ERROR]   ATest.broken:12 expected:<1> but was:<2>
[INFO]
[ERROR] Tests run: 305, Failures: 3, Errors: 0, Skipped: 1
";
        assert_eq!(counts(text), ("maven", 301, 3, 1, 0));
        // Cut short before `Results:`: the class lines are all there is.
        let cut: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
        assert_eq!(counts(&cut), ("maven", 301, 3, 1, 0));
        // Two modules: two totals, summed.
        let two = "[INFO] Tests run: 10, Failures: 0, Errors: 1, Skipped: 0\n[INFO] Tests run: 5, Failures: 0, Errors: 0, Skipped: 0";
        assert_eq!(counts(two), ("maven", 14, 0, 0, 1));
    }

    #[test]
    fn gradle() {
        assert_eq!(counts("305 tests completed, 3 failed, 1 skipped"), ("gradle", 301, 3, 1, 0));
    }

    #[test]
    fn rspec() {
        assert_eq!(counts("305 examples, 3 failures, 1 pending"), ("rspec", 301, 3, 1, 0));
        assert_eq!(
            counts("0 examples, 0 failures, 1 error occurred outside of examples"),
            ("rspec", 0, 0, 0, 1)
        );
    }

    #[test]
    fn minitest() {
        assert_eq!(
            counts("305 runs, 400 assertions, 2 failures, 1 errors, 1 skips"),
            ("minitest", 301, 2, 1, 1)
        );
    }

    #[test]
    fn phpunit() {
        assert_eq!(
            counts("FAILURES!\nTests: 305, Assertions: 400, Failures: 3, Skipped: 1."),
            ("phpunit", 301, 3, 1, 0)
        );
        assert_eq!(counts("OK (305 tests, 400 assertions)"), ("phpunit", 305, 0, 0, 0));
    }

    #[test]
    fn dotnet_assemblies_are_summed() {
        let text = "Failed!  - Failed:     3, Passed:   301, Skipped:     1, Total:   305, Duration: 2 s - A.Tests.dll (net8.0)\nPassed!  - Failed:     0, Passed:    10, Skipped:     0, Total:    10, Duration: 1 s - B.Tests.dll (net8.0)";
        assert_eq!(counts(text), ("dotnet", 311, 3, 1, 0));
    }

    #[test]
    fn ctest() {
        assert_eq!(counts("97% tests passed, 3 tests failed out of 100"), ("ctest", 97, 3, 0, 0));
        assert_eq!(counts("100% tests passed, 0 tests failed out of 42"), ("ctest", 42, 0, 0, 0));
    }

    #[test]
    fn swift() {
        let text = "\
Test Suite 'ATests' failed at 2026-11-30 10:00:00.000.
\t Executed 10 tests, with 1 failure (0 unexpected) in 0.1 (0.1) seconds
Test Suite 'All tests' failed at 2026-11-30 10:00:00.000.
\t Executed 305 tests, with 1 test skipped and 3 failures (0 unexpected) in 2.1 (2.2) seconds";
        assert_eq!(counts(text), ("xctest", 301, 3, 1, 0));
        let text = "✘ Test parses() failed after 0.001 seconds with 2 issues.\n➜ Test slow() skipped.\n✘ Test run with 10 tests failed after 0.002 seconds with 2 issues.";
        assert_eq!(counts(text), ("swift-testing", 8, 1, 1, 0));
    }

    #[test]
    fn zig() {
        assert_eq!(counts("All 305 tests passed."), ("zig", 305, 0, 0, 0));
        assert_eq!(counts("301 passed; 1 skipped; 3 failed."), ("zig", 301, 3, 1, 0));
        assert_eq!(
            counts(
                "Build Summary: 3/5 steps succeeded; 1 failed; 301/305 tests passed; 1 skipped; 3 failed"
            ),
            ("zig", 301, 3, 1, 0)
        );
    }

    #[test]
    fn jest_and_vitest_failures_without_summary() {
        let text = "    ✓ ok one (1 ms)\n    ✕ breaks (4 ms)\n    ✕ breaks (5 ms)\n    ✕ other";
        assert_eq!(counts(text), ("jest", 0, 2, 0, 0));
        assert_eq!(counts("   × s > a 9ms\n   × s > b 1ms"), ("vitest", 0, 2, 0, 0));
    }

    #[test]
    fn no_test_output_is_none() {
        assert_eq!(t("Compiling x\nFinished in 2.3s\nhello world"), None);
        assert_eq!(t(""), None);
    }

    #[test]
    fn facts_put_failures_first_and_leave_zeros_out() {
        let tally = Tally { passed: 301, failed: 3, skipped: 1, errors: 2, runner: "pytest" };
        assert_eq!(
            tally.facts(),
            vec![
                ("failed".to_string(), 3),
                ("error".to_string(), 2),
                ("passed".to_string(), 301),
                ("skipped".to_string(), 1)
            ]
        );
        let tally = Tally { passed: 5, runner: "jest", ..Tally::default() };
        assert_eq!(tally.facts(), vec![("passed".to_string(), 5)]);
    }

    fn fixture_lines(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/tests")
            .join(format!("{name}.json"));
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        crate::reduce::screen(json["text"].as_str().unwrap().as_bytes()).into_owned()
    }

    /// Real runs cut short before their summaries: counted from per-test lines, each
    /// failure once although both runners list it twice.
    #[test]
    fn real_fixtures_cut_before_the_summary() {
        let cases: &[(&str, &str, Counted)] = &[
            ("cargo-test-300", "test result:", ("cargo", 301, 3, 1, 0)),
            ("pytest-verbose-failures-pty", "===== 3 failed", ("pytest", 182, 3, 0, 1)),
            ("go-test-verbose-failures", "FAIL\texample.com/inv/stock", ("go", 140, 3, 0, 0)),
        ];
        for (name, cut_at, want) in cases {
            let text = fixture_lines(name);
            let lines = crate::reduce::split_lines(&text);
            let cut = lines.iter().position(|l| l.contains(cut_at)).unwrap();
            let got = tally(&lines[..cut]).unwrap();
            assert_eq!(
                (got.runner, got.passed, got.failed, got.skipped, got.errors),
                *want,
                "{name}"
            );
        }
    }

    /// Every real fixture, rendered the way `reduce` renders it, with the counts read
    /// off each output by hand.
    #[test]
    fn real_fixtures() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tests");
        let expected: &[(&str, Counted)] = &[
            ("cargo-test-300", ("cargo", 301, 3, 1, 0)),
            ("cargo-test-failures", ("cargo", 326, 3, 1, 0)),
            ("cargo-test-no-fail-fast-backtrace-pty", ("cargo", 369, 4, 1, 0)),
            ("cargo-test-pass-pty", ("cargo", 373, 0, 1, 0)),
            // Not -v: failures only.
            ("go-test-failures-panic", ("go", 0, 3, 0, 0)),
            // Leaves: TestPairsTable's 80 and TestAddMany's 60 subtests pass.
            ("go-test-verbose-failures", ("go", 140, 3, 0, 0)),
            ("go-test-verbose-pass", ("go", 80, 0, 0, 0)),
            ("jest-failures-pipe", ("jest", 243, 3, 0, 0)),
            ("jest-failures-pty", ("jest", 242, 2, 0, 0)),
            ("jest-verbose-failures-pty", ("jest", 243, 3, 0, 0)),
            ("jest-verbose-pass", ("jest", 240, 0, 0, 0)),
            ("pytest-failures-fixture-error", ("pytest", 182, 3, 0, 1)),
            ("pytest-failures", ("pytest", 239, 3, 1, 1)),
            ("pytest-verbose-failures-pty", ("pytest", 182, 3, 0, 1)),
            ("pytest-verbose-pass", ("pytest", 180, 0, 0, 0)),
            ("vitest-failures-pipe", ("vitest", 240, 3, 0, 0)),
            ("vitest-failures-pty", ("vitest", 151, 2, 0, 0)),
            ("vitest-pass-pty", ("vitest", 240, 0, 0, 0)),
            ("vitest-verbose-failures-pty", ("vitest", 240, 3, 0, 0)),
        ];
        for (stem, want) in expected {
            let path = dir.join(format!("{stem}.json"));
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let text = json["text"].as_str().unwrap();
            let rendered = crate::reduce::screen(text.as_bytes());
            let lines = crate::reduce::split_lines(&rendered);
            let got = tally(&lines).unwrap_or_else(|| panic!("{stem}: no tally"));
            assert_eq!(
                (got.runner, got.passed, got.failed, got.skipped, got.errors),
                *want,
                "{stem}"
            );
        }
    }
}
