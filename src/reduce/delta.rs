//! Run-to-run deltas (issue 14): when a command runs again in the same session and
//! directory and its output differs, the rendition leads with what changed since the
//! previous run, by failure: which failures are new, which were fixed, which still fail.
//!
//! A failure is named by a *failure key*, read from one evidence line (and, for a compiler
//! error, the location under it) in the dialects tj's rules cover: a failing test's name
//! (cargo, nextest, go, pytest, jest/vitest, Gradle, rspec), or a compiler or linter error
//! with its file and message but not its line and column, so that an error that only moved
//! is still the same error. Run summaries (`test result: FAILED. 3 passed; 2 failed`,
//! `could not compile … due to 2 previous errors`) are outcomes, not failures: they would
//! read as one fixed and one new failure at every run.
//!
//! The keys are read from renditions (the previous run's stored one, this run's adopted
//! one), which keep every evidence line by the invariant; `[tj]` lines are tj's own and are
//! skipped. The comparison is by set, the order of first appearance kept, so the delta is
//! deterministic. The header only adds lines, so the evidence invariant still holds for the
//! rendition it leads; the gate still judges its size ([`super::reduce_within`]).

use std::collections::HashSet;
use std::fmt::Write as _;

/// What is known of the previous run of the same command, in the same session and place.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Previous {
    /// The previous run's artifact id.
    pub id: String,
    /// Seconds since the previous run.
    pub age_secs: u64,
    /// The previous run's failure keys, in order of first appearance ([`failures`]).
    pub failures: Vec<String>,
}

/// Fixed, new and still-failing keys between two runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delta {
    /// Failing before, not now.
    pub fixed: Vec<String>,
    /// Failing now, not before.
    pub new: Vec<String>,
    /// Failing before and now.
    pub still: Vec<String>,
}

/// Keys listed by name in the header, per kind; the rest are counted.
const LISTED: usize = 10;

/// The longest key kept whole; a longer one is cut (on a character boundary) and marked.
const KEY_MAX: usize = 200;

/// The failure keys of a rendition, in order of first appearance, each once.
pub fn failures(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut seen = HashSet::new();
    let mut keys = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let next = lines.get(i + 1).copied();
        if let Some(key) = failure_key(line, next)
            && seen.insert(key.clone())
        {
            keys.push(key);
        }
    }
    keys
}

/// Compares the failures of the previous run with this run's.
pub fn compare(before: &[String], now: &[String]) -> Delta {
    let before_set: HashSet<&str> = before.iter().map(String::as_str).collect();
    let now_set: HashSet<&str> = now.iter().map(String::as_str).collect();
    Delta {
        fixed: before.iter().filter(|k| !now_set.contains(k.as_str())).cloned().collect(),
        new: now.iter().filter(|k| !before_set.contains(k.as_str())).cloned().collect(),
        still: now.iter().filter(|k| before_set.contains(k.as_str())).cloned().collect(),
    }
}

impl Delta {
    /// True when neither run named a failure: there is no delta to tell.
    pub fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.new.is_empty() && self.still.is_empty()
    }

    /// The header that leads the rendition: one summary line naming the previous artifact,
    /// then the fixed failures (which this run's output no longer shows) and the new ones,
    /// each list cut at ten names.
    pub fn header(&self, previous: &Previous) -> String {
        let mut counts = Vec::new();
        if !self.fixed.is_empty() {
            counts.push(format!("{} fixed", self.fixed.len()));
        }
        if !self.new.is_empty() {
            let noun = if self.new.len() == 1 { "failure" } else { "failures" };
            counts.push(format!("{} new {noun}", self.new.len()));
        }
        if !self.still.is_empty() {
            counts.push(format!("{} still failing", self.still.len()));
        }
        let mut out = format!(
            "[tj] since {} ({}): {}\n",
            previous.id,
            age(previous.age_secs),
            counts.join(", ")
        );
        list(&mut out, "fixed", &self.fixed);
        list(&mut out, "new", &self.new);
        out
    }
}

/// `text` without the delta header that leads it, if one does ([`Delta::header`]): the
/// rendition as it would be with no previous run (`tj rules replay` compares with that).
pub fn without_header(text: &str) -> &str {
    if !text.starts_with("[tj] since ") {
        return text;
    }
    let mut rest = text;
    let mut first = true;
    while let Some((line, after)) = rest.split_once('\n') {
        let listed =
            ["[tj]   fixed: ", "[tj]   new: ", "[tj]   … and "].iter().any(|p| line.starts_with(p));
        if !(first || listed) {
            break;
        }
        first = false;
        rest = after;
    }
    rest
}

/// Appends `[tj]   WHAT: key` lines for the first [`LISTED`] keys, then a count of the rest.
fn list(out: &mut String, what: &str, keys: &[String]) {
    for key in keys.iter().take(LISTED) {
        let _ = writeln!(out, "[tj]   {what}: {key}");
    }
    if keys.len() > LISTED {
        let _ = writeln!(out, "[tj]   … and {} more {what}", keys.len() - LISTED);
    }
}

/// An age as people say it: `45 s ago`, `2 min ago`, `3 h ago`.
fn age(secs: u64) -> String {
    match secs {
        0..=89 => format!("{secs} s ago"),
        90..=5_399 => format!("{} min ago", (secs + 30) / 60),
        _ => format!("{} h ago", (secs + 1_800) / 3_600),
    }
}

/// The failure key of `line`, if it names a failure; `next` is the line after it (where a
/// compiler puts the location of an error).
fn failure_key(line: &str, next: Option<&str>) -> Option<String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with("[tj]") {
        return None;
    }
    let key = test_failure(t).map(str::to_owned).or_else(|| compiler_error(t, next))?;
    let key = key.split_whitespace().collect::<Vec<_>>().join(" ");
    if key.is_empty() {
        return None;
    }
    Some(cut(key))
}

/// The name of a failing test, in the runners' own lines.
fn test_failure(t: &str) -> Option<&str> {
    // cargo/libtest: `test math::tests::add ... FAILED`.
    if let Some(rest) = t.strip_prefix("test ")
        && let Some(name) = rest.strip_suffix(" ... FAILED")
    {
        return Some(name);
    }
    // nextest: `FAIL [   0.004s] crate::bin tests::name`.
    if let Some(rest) = t.strip_prefix("FAIL [")
        && let Some((_, name)) = rest.split_once("] ")
    {
        return Some(name);
    }
    // go: `--- FAIL: TestDivide (0.00s)`.
    if let Some(rest) = t.strip_prefix("--- FAIL: ") {
        return Some(strip_duration(rest));
    }
    // pytest's summary: `FAILED tests/test_x.py::test_y - AssertionError: …`, and
    // `ERROR tests/test_x.py::test_z - …` for errors in setup or collection.
    for lead in ["FAILED ", "ERROR "] {
        if let Some(rest) = t.strip_prefix(lead)
            && rest.contains("::")
        {
            return Some(rest.split_once(" - ").map_or(rest, |(id, _)| id));
        }
    }
    // jest/vitest: `FAIL src/a.test.ts`, `FAIL  src/a.test.ts > suite > name`, and a failed
    // case `✕ name (5 ms)` / `× name 5ms`.
    if let Some(rest) = t.strip_prefix("FAIL ") {
        return Some(strip_duration(rest.trim_start()));
    }
    for mark in ["✕ ", "× ", "✗ "] {
        if let Some(rest) = t.strip_prefix(mark) {
            return Some(strip_duration(rest));
        }
    }
    // rspec: `rspec ./spec/math_spec.rb:12 # Math adds`.
    if let Some(rest) = t.strip_prefix("rspec ")
        && let Some((_, name)) = rest.split_once(" # ")
    {
        return Some(name);
    }
    // Gradle: `MathTest > adds() FAILED`.
    if let Some(name) = t.strip_suffix(" FAILED")
        && name.contains(" > ")
    {
        return Some(name);
    }
    None
}

/// `name (12 ms)`, `name (0.00s)`, `name 12ms` → `name`.
fn strip_duration(text: &str) -> &str {
    let text = text.trim_end();
    if let Some(open) = text.rfind(" (")
        && text.ends_with(')')
        && is_duration(&text[open + 2..text.len() - 1])
    {
        return &text[..open];
    }
    if let Some(space) = text.rfind(' ')
        && is_duration(&text[space + 1..])
    {
        return &text[..space];
    }
    text
}

/// `12 ms`, `12ms`, `0.00s`, `1.2 s`.
fn is_duration(text: &str) -> bool {
    let number = text.trim_end_matches(|c: char| c.is_ascii_alphabetic()).trim_end();
    let unit = &text[number.len()..].trim_start();
    matches!(*unit, "ms" | "s" | "µs" | "us" | "m")
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// A compiler or linter error, keyed by file and message without line and column.
fn compiler_error(t: &str, next: Option<&str>) -> Option<String> {
    // rustc: `error[E0308]: mismatched types`, its location on the next line
    // (` --> src/main.rs:3:5`). Summaries are outcomes, not failures.
    if t.starts_with("error[") || t.starts_with("error: ") {
        const OUTCOMES: [&str; 5] = [
            "error: could not compile",
            "error: aborting due to",
            "error: test failed",
            "error: failed to compile",
            "error: Recipe",
        ];
        if OUTCOMES.iter().any(|o| t.starts_with(o)) {
            return None;
        }
        let place = next
            .map(str::trim_start)
            .and_then(|n| n.strip_prefix("--> "))
            .map(|loc| strip_position(loc.trim()));
        return Some(match place {
            Some(file) => format!("{t} ({file})"),
            None => t.to_owned(),
        });
    }
    // gcc/clang/go vet/eslint-unix: `src/a.c:3:5: error: msg`; tsc: `src/a.ts(3,5): error
    // TS2322: msg`.
    let (at, sep) = [": error: ", ": error TS", "): error TS", ": fatal error: "]
        .iter()
        .find_map(|sep| t.find(sep).map(|at| (at, *sep)))?;
    let location = &t[..at + usize::from(sep.starts_with(')'))];
    let file = strip_position(location);
    if file.is_empty() || file.contains(' ') {
        return None;
    }
    let message = t[at + usize::from(sep.starts_with(')')) + 2..].trim_start();
    Some(format!("{file}: {message}"))
}

/// `src/a.rs:3:5` → `src/a.rs`; `src/a.ts(3,5)` → `src/a.ts`.
fn strip_position(location: &str) -> &str {
    if let Some(open) = location.rfind('(')
        && location.ends_with(')')
        && location[open + 1..location.len() - 1].bytes().all(|b| b.is_ascii_digit() || b == b',')
    {
        return &location[..open];
    }
    let mut rest = location;
    for _ in 0..2 {
        match rest.rsplit_once(':') {
            Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => {
                rest = head;
            }
            _ => break,
        }
    }
    rest
}

/// `key` cut at [`KEY_MAX`] bytes, on a character boundary, marked with `…`.
fn cut(mut key: String) -> String {
    if key.len() > KEY_MAX {
        key.truncate(crate::text::floor_char_boundary(&key, KEY_MAX));
        key.push('…');
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<String> {
        failures(text)
    }

    #[test]
    fn each_dialect_names_its_failures() {
        let text = "\
test math::tests::add ... ok
test math::tests::div ... FAILED
        FAIL [   0.004s] calc::bin tests::parse
--- FAIL: TestDivide (0.00s)
FAILED tests/test_math.py::test_div - ZeroDivisionError: division by zero
ERROR tests/test_db.py::test_conn - ConnectionError
 FAIL  src/math.test.ts > math > divides
FAIL src/other.test.ts (1.2 s)
    ✕ adds numbers (5 ms)
    × subtracts 3ms
rspec ./spec/math_spec.rb:12 # Math adds
MathTest > adds() FAILED
error[E0308]: mismatched types
  --> src/main.rs:3:5
error: unused variable: `x`
src/a.c:3:5: error: expected ';' before '}' token
src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.
[tj] since abc (1 min ago): 1 fixed
test result: FAILED. 1 passed; 1 failed; 0 ignored
error: could not compile `calc` (bin \"calc\") due to 2 previous errors
error: test failed, to rerun pass `--lib`
";
        assert_eq!(
            keys(text),
            [
                "math::tests::div",
                "calc::bin tests::parse",
                "TestDivide",
                "tests/test_math.py::test_div",
                "tests/test_db.py::test_conn",
                "src/math.test.ts > math > divides",
                "src/other.test.ts",
                "adds numbers",
                "subtracts",
                "Math adds",
                "MathTest > adds()",
                "error[E0308]: mismatched types (src/main.rs)",
                "error: unused variable: `x`",
                "src/a.c: error: expected ';' before '}' token",
                "src/a.ts: error TS2322: Type 'string' is not assignable to type 'number'.",
            ]
        );
    }

    #[test]
    fn passing_lines_prose_and_summaries_name_no_failure() {
        for line in [
            "test math::tests::add ... ok",
            "--- PASS: TestAdd (0.00s)",
            "PASSED tests/test_math.py::test_add",
            "FAILED (failures=2)",
            "test result: FAILED. 3 passed; 2 failed",
            "error: could not compile `x` due to 1 previous error",
            "the build FAILED",
            "warning: unused import",
            "see src/error: handling.md",
            "",
        ] {
            assert_eq!(keys(line), Vec::<String>::new(), "{line}");
        }
    }

    #[test]
    fn a_moved_error_is_the_same_error() {
        let before = keys("error[E0308]: mismatched types\n --> src/main.rs:3:5\n");
        let after = keys("error[E0308]: mismatched types\n --> src/main.rs:9:1\n");
        assert_eq!(before, after);
        assert_eq!(keys("src/a.c:3:5: error: boom"), keys("src/a.c:30:1: error: boom"));
    }

    #[test]
    fn three_failing_then_one_fixed_one_new_one_still() {
        let before = keys("test a ... FAILED\ntest b ... FAILED\ntest c ... FAILED\n");
        let now = keys("test b ... FAILED\ntest d ... FAILED\ntest a ... ok\ntest c ... ok\n");
        let delta = compare(&before, &now);
        assert_eq!(delta.fixed, ["a", "c"]);
        assert_eq!(delta.new, ["d"]);
        assert_eq!(delta.still, ["b"]);
        let previous = Previous { id: "a1b2c3d4e5f6".into(), age_secs: 125, failures: before };
        assert_eq!(
            delta.header(&previous),
            "[tj] since a1b2c3d4e5f6 (2 min ago): 2 fixed, 1 new failure, 1 still failing\n\
             [tj]   fixed: a\n[tj]   fixed: c\n[tj]   new: d\n"
        );
    }

    #[test]
    fn the_header_comes_off_whole_and_nothing_else_does() {
        let delta = compare(&["a".into(), "b".into()], &["c".into()]);
        let header = delta.header(&Previous { id: "x".into(), age_secs: 5, ..Previous::default() });
        let body = "[tj] 1 failed\ntest c ... FAILED\n";
        assert_eq!(without_header(&format!("{header}{body}")), body);
        assert_eq!(without_header(body), body);
        assert_eq!(without_header("[tj] since x (5 s ago): 1 fixed\n"), "");
    }

    #[test]
    fn long_lists_are_cut_and_counted() {
        let before: Vec<String> = (0..13).map(|i| format!("t{i}")).collect();
        let delta = compare(&before, &[]);
        let header = delta.header(&Previous { id: "x".into(), age_secs: 5, ..Previous::default() });
        assert!(header.starts_with("[tj] since x (5 s ago): 13 fixed\n"), "{header}");
        assert_eq!(header.matches("fixed: ").count(), LISTED);
        assert!(header.ends_with("[tj]   … and 3 more fixed\n"), "{header}");
    }

    #[test]
    fn ages_read_as_people_say_them() {
        assert_eq!(age(0), "0 s ago");
        assert_eq!(age(89), "89 s ago");
        assert_eq!(age(90), "2 min ago");
        assert_eq!(age(3_000), "50 min ago");
        assert_eq!(age(7_200), "2 h ago");
    }

    #[test]
    fn keys_are_bounded_and_whitespace_folded() {
        let long = format!("test {} ... FAILED", "x".repeat(500));
        let key = &keys(&long)[0];
        assert!(key.len() <= KEY_MAX + '…'.len_utf8());
        assert!(key.ends_with('…'));
        assert_eq!(keys("--- FAIL: Test\tA   B (0.1s)"), ["Test A B"]);
    }
}
