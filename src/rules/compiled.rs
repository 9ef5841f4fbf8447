//! Regexes of one rule, compiled only when that rule is selected (DESIGN.md "Only the
//! selected rule's regexes need compiling").
//!
//! Rule files carry JavaScript regexes (tokenjuice compatibility). Most are valid for the
//! `regex` crate; the ones that use lookaround fall back to `fancy-regex`, whose backtracking
//! is bounded, so a hostile project rule costs time, never a hang. A pattern neither accepts
//! is disabled alone, with a [`PatternError`] naming the rule, the field and the reason.

use std::fmt;

use regex_automata::hybrid;
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::syntax;
use regex_automata::{Input, meta};

use super::schema::Rule;

/// Builds ASCII patterns as one matcher. Only "does it match" is ever asked, so no capture
/// groups are compiled, and Unicode classes are off (JavaScript's `\d`, `\w`, `\b` are
/// ASCII too): together a third of the cost of `regex::RegexSet` to build.
fn build_ascii(patterns: &[&str], ci: bool, ml: bool, dot: bool) -> Result<meta::Regex, String> {
    meta::Builder::new()
        .configure(
            meta::Config::new()
                .auto_prefilter(false)
                .which_captures(WhichCaptures::None)
                .nfa_size_limit(Some(SIZE_LIMIT << 1)),
        )
        .syntax(
            syntax::Config::new()
                .unicode(false)
                .utf8(false)
                .case_insensitive(ci)
                .multi_line(ml)
                .dot_matches_new_line(dot),
        )
        .build_many(patterns)
        .map_err(|e| e.to_string())
}

/// A compiled pattern: the linear-time engine when it can, the backtracking one when the
/// pattern needs lookaround or backreferences.
///
/// An ASCII pattern compiles as a byte regex with Unicode classes off: `\d`, `\w` and `\b`
/// are then ASCII, as they are in JavaScript, and compiling costs a third of what the
/// Unicode tables do (start-up is a budget, DESIGN.md "Performance budget"). A pattern with
/// non-ASCII text keeps Unicode semantics, so `━+` repeats the character, not its last byte.
#[derive(Debug)]
pub enum Pattern {
    /// An ASCII pattern, compiled without Unicode classes or capture groups.
    Ascii(Box<meta::Regex>),
    /// Compiled by `regex` with Unicode semantics.
    Linear(regex::Regex),
    /// Compiled by `fancy-regex`; runtime errors (backtrack limit) count as no match.
    Backtracking(Box<fancy_regex::Regex>),
}

/// Why one pattern of a rule was disabled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError {
    /// The rule's id.
    pub rule: String,
    /// Where in the rule, e.g. `filters.skipPatterns[2]`.
    pub field: String,
    /// The pattern text.
    pub pattern: String,
    /// The regex engine's message.
    pub reason: String,
}

impl fmt::Display for PatternError {
    /// Names the rule and the field, never the pattern: it comes from a file nobody vetted
    /// (see [`super::LoadError`]), and a compile bomb is tens of kilobytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The regex crates' last line is the kind of error (`error: unclosed group`); the
        // lines above it quote the pattern.
        let reason = self.reason.lines().last().unwrap_or_default().trim();
        let reason = reason.strip_prefix("error: ").unwrap_or(reason);
        write!(
            f,
            "rule `{}`: invalid regex in {}: {}; that pattern is disabled",
            super::printable(&self.rule),
            self.field,
            super::printable(reason)
        )
    }
}

impl std::error::Error for PatternError {}

const SIZE_LIMIT: usize = 1 << 22;

impl Pattern {
    /// Compiles `pattern` with JavaScript-style `flags` (`i`, `m`, `s`; `g`, `u`, `y`, `d`
    /// are meaningless here and ignored).
    pub fn new(pattern: &str, flags: Option<&str>) -> Result<Pattern, String> {
        let flags = flags.unwrap_or("");
        let (ci, ml, dot) = (flags.contains('i'), flags.contains('m'), flags.contains('s'));
        if pattern.is_ascii()
            && let Ok(re) = build_ascii(&[pattern], ci, ml, dot)
        {
            return Ok(Pattern::Ascii(Box::new(re)));
        }
        let linear = regex::RegexBuilder::new(pattern)
            .case_insensitive(ci)
            .multi_line(ml)
            .dot_matches_new_line(dot)
            .size_limit(SIZE_LIMIT)
            .build();
        match linear {
            Ok(re) => Ok(Pattern::Linear(re)),
            Err(linear_err) => {
                let mut inline = String::new();
                for (on, c) in [(ci, 'i'), (ml, 'm'), (dot, 's')] {
                    if on {
                        inline.push(c);
                    }
                }
                let text = if inline.is_empty() {
                    pattern.to_owned()
                } else {
                    format!("(?{inline}){pattern}")
                };
                match fancy_regex::RegexBuilder::new(&text).backtrack_limit(100_000).build() {
                    Ok(re) => Ok(Pattern::Backtracking(Box::new(re))),
                    Err(_) => Err(linear_err.to_string()),
                }
            }
        }
    }

    /// Returns true if and only if the pattern matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        match self {
            Pattern::Ascii(re) => re.is_match(Input::new(text.as_bytes())),
            Pattern::Linear(re) => re.is_match(text),
            Pattern::Backtracking(re) => re.is_match(text).unwrap_or(false),
        }
    }
}

/// A list of patterns matched as one: a line matches if any pattern does.
#[derive(Debug, Default)]
pub struct PatternSet {
    ascii: Option<meta::Regex>,
    linear: Option<regex::RegexSet>,
    backtracking: Vec<fancy_regex::Regex>,
}

impl PatternSet {
    /// Compiles `patterns` (no flags, as tokenjuice compiles filters), reporting each
    /// invalid one in `problems` and leaving it out.
    pub fn new(
        rule: &str,
        field: &str,
        patterns: &[String],
        problems: &mut Vec<PatternError>,
    ) -> PatternSet {
        if patterns.is_empty() {
            return PatternSet::default();
        }
        let (ascii, unicode): (Vec<&str>, Vec<&str>) =
            patterns.iter().map(String::as_str).partition(|p| p.is_ascii());
        // Fast path: one matcher per kind; compile one by one only to find a culprit.
        let ascii_set = if ascii.is_empty() {
            Ok(None)
        } else {
            build_ascii(&ascii, false, false, false).map(Some)
        };
        let linear_set = if unicode.is_empty() {
            Ok(None)
        } else {
            regex::RegexSetBuilder::new(&unicode).size_limit(SIZE_LIMIT << 1).build().map(Some)
        };
        if let (Ok(ascii), Ok(linear)) = (ascii_set, linear_set) {
            return PatternSet { ascii, linear, backtracking: Vec::new() };
        }
        let mut ascii_ok = Vec::new();
        let mut linear_ok = Vec::new();
        let mut backtracking = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            match Pattern::new(pattern, None) {
                Ok(Pattern::Ascii(_)) => ascii_ok.push(pattern.as_str()),
                Ok(Pattern::Linear(_)) => linear_ok.push(pattern.as_str()),
                Ok(Pattern::Backtracking(re)) => backtracking.push(*re),
                Err(reason) => problems.push(PatternError {
                    rule: rule.to_owned(),
                    field: format!("{field}[{i}]"),
                    pattern: pattern.clone(),
                    reason,
                }),
            }
        }
        let ascii = (!ascii_ok.is_empty())
            .then(|| build_ascii(&ascii_ok, false, false, false).ok())
            .flatten();
        let linear =
            (!linear_ok.is_empty()).then(|| regex::RegexSet::new(linear_ok).ok()).flatten();
        PatternSet { ascii, linear, backtracking }
    }

    /// Returns true if and only if the set holds no usable pattern.
    pub fn is_empty(&self) -> bool {
        self.ascii.is_none()
            && self.linear.as_ref().is_none_or(|s| s.is_empty())
            && self.backtracking.is_empty()
    }

    /// Returns true if and only if some pattern matches `line`.
    pub fn is_match(&self, line: &str) -> bool {
        self.ascii.as_ref().is_some_and(|s| s.is_match(Input::new(line.as_bytes())))
            || self.linear.as_ref().is_some_and(|s| s.is_match(line))
            || self.backtracking.iter().any(|re| re.is_match(line).unwrap_or(false))
    }
}

/// The kinds of line a rule's line patterns recognise, as bits of [`LineKinds::kinds`].
pub const SKIP: u8 = 1;
/// See [`SKIP`].
pub const KEEP: u8 = 2;
/// See [`SKIP`].
pub const EVIDENCE: u8 = 4;

/// A rule's skip, keep and evidence patterns, matched against a line in one pass.
///
/// Every ASCII pattern of the three lists goes into one matcher that reports all the
/// patterns a line matches (one lazy-DFA scan instead of three searches per line: this is
/// the hot loop of a reduction). Non-ASCII and lookaround patterns stay in per-kind sets.
#[derive(Debug, Default)]
pub struct LineKinds {
    ascii: Option<(hybrid::dfa::DFA, Vec<u8>)>,
    rest: [PatternSet; 3],
    present: u8,
}

/// Scratch space for [`LineKinds::kinds`], reused across lines: the matched-pattern set and
/// the lazy DFA's state cache.
#[derive(Debug)]
pub struct Scratch(regex_automata::PatternSet, Option<hybrid::dfa::Cache>);

impl LineKinds {
    /// Compiles the three lists (skip, keep, evidence, in that order), reporting each
    /// invalid pattern in `problems` under its own field and index.
    pub fn new(
        rule: &str,
        lists: [(&str, &Vec<String>); 3],
        problems: &mut Vec<PatternError>,
    ) -> LineKinds {
        let bits = [SKIP, KEEP, EVIDENCE];
        let mut ascii: Vec<&str> = Vec::new();
        let mut kinds: Vec<u8> = Vec::new();
        let mut rest: [Vec<String>; 3] = Default::default();
        for (k, (_, list)) in lists.iter().enumerate() {
            for pattern in list.iter() {
                if pattern.is_ascii() {
                    ascii.push(pattern);
                    kinds.push(bits[k]);
                } else {
                    rest[k].push(pattern.clone());
                }
            }
        }
        let mut matcher = build_all(&ascii);
        if matcher.is_err() {
            // Find the culprits one by one; the valid ASCII ones are rebuilt together.
            let (mut ok, mut ok_kinds) = (Vec::new(), Vec::new());
            for (k, (field, list)) in lists.iter().enumerate() {
                for (i, pattern) in list.iter().enumerate().filter(|(_, p)| p.is_ascii()) {
                    match Pattern::new(pattern, None) {
                        Ok(Pattern::Ascii(_)) => {
                            ok.push(pattern.as_str());
                            ok_kinds.push(bits[k]);
                        }
                        Ok(_) => rest[k].push(pattern.clone()),
                        Err(reason) => problems.push(PatternError {
                            rule: rule.to_owned(),
                            field: format!("{field}[{i}]"),
                            pattern: pattern.clone(),
                            reason,
                        }),
                    }
                }
            }
            kinds = ok_kinds;
            matcher = build_all(&ok);
        }
        let mut present = kinds.iter().fold(0, |acc, k| acc | k);
        let rest = [0, 1, 2].map(|k| {
            let set = PatternSet::new(rule, lists[k].0, &rest[k], problems);
            if !set.is_empty() {
                present |= bits[k];
            }
            set
        });
        let ascii = matcher.ok().flatten().map(|re| (re, kinds));
        LineKinds { ascii, rest, present }
    }

    /// Returns true if and only if some pattern of these kinds exists.
    pub fn has(&self, kinds: u8) -> bool {
        self.present & kinds != 0
    }

    /// Scratch space for [`kinds`](Self::kinds).
    pub fn scratch(&self) -> Scratch {
        let len = self.ascii.as_ref().map_or(0, |(dfa, _)| dfa.pattern_len());
        Scratch(
            regex_automata::PatternSet::new(len),
            self.ascii.as_ref().map(|(dfa, _)| dfa.create_cache()),
        )
    }

    /// The kinds of the patterns `line` matches.
    pub fn kinds(&self, line: &str, scratch: &mut Scratch) -> u8 {
        let mut out = 0;
        if let (Some((dfa, kinds)), Some(cache)) = (&self.ascii, scratch.1.as_mut()) {
            scratch.0.clear();
            match dfa.try_which_overlapping_matches(
                cache,
                &Input::new(line.as_bytes()),
                &mut scratch.0,
            ) {
                Ok(()) => {
                    for pid in scratch.0.iter() {
                        out |= kinds[pid.as_usize()];
                    }
                }
                // The lazy DFA gave up on this line (it has no quit bytes configured, so
                // this should not happen): never drop what could not be classified.
                Err(_) => out |= KEEP | EVIDENCE,
            }
        }
        for (k, set) in self.rest.iter().enumerate() {
            if !set.is_empty() && set.is_match(line) {
                out |= [SKIP, KEEP, EVIDENCE][k];
            }
        }
        out
    }
}

/// One matcher reporting every ASCII pattern a haystack matches (`None` for no patterns).
///
/// A lazy DFA used directly, not through `meta`: only "which patterns match" is asked, on
/// short lines, and skipping meta's other engines halves both the build and the per-line
/// cost of the reduction's hot loop.
fn build_all(patterns: &[&str]) -> Result<Option<hybrid::dfa::DFA>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    hybrid::dfa::DFA::builder()
        .configure(hybrid::dfa::DFA::config().match_kind(regex_automata::MatchKind::All))
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .thompson(
            thompson::Config::new()
                .which_captures(WhichCaptures::None)
                .nfa_size_limit(Some(SIZE_LIMIT << 1)),
        )
        .build_many(patterns)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// The selected rule's regexes, ready to run.
#[derive(Debug, Default)]
pub struct CompiledRule {
    /// `filters.skipPatterns`, `filters.keepPatterns` and `evidence`, matched in one pass.
    pub lines: LineKinds,
    /// `counters`, by name; a counter whose pattern is invalid is left out.
    pub counters: Vec<(String, Pattern)>,
    /// `matchOutput`, with their messages.
    pub outputs: Vec<(Pattern, String)>,
    /// Every pattern that was disabled, for one warning each.
    pub problems: Vec<PatternError>,
}

impl CompiledRule {
    /// Compiles every pattern of `rule`. Never fails: invalid patterns are disabled and
    /// listed in `problems`.
    pub fn compile(rule: &Rule) -> CompiledRule {
        let mut problems = Vec::new();
        let id = rule.id.as_str();
        let lines = LineKinds::new(
            id,
            [
                ("filters.skipPatterns", &rule.filters.skip_patterns),
                ("filters.keepPatterns", &rule.filters.keep_patterns),
                ("evidence", &rule.evidence),
            ],
            &mut problems,
        );
        let mut counters = Vec::with_capacity(rule.counters.len());
        for (i, counter) in rule.counters.iter().enumerate() {
            match Pattern::new(&counter.pattern, counter.flags.as_deref()) {
                Ok(re) => counters.push((counter.name.clone(), re)),
                Err(reason) => problems.push(PatternError {
                    rule: id.to_owned(),
                    field: format!("counters[{i}]"),
                    pattern: counter.pattern.clone(),
                    reason,
                }),
            }
        }
        let mut outputs = Vec::with_capacity(rule.match_output.len());
        for (i, out) in rule.match_output.iter().enumerate() {
            match Pattern::new(&out.pattern, out.flags.as_deref()) {
                Ok(re) => outputs.push((re, out.message.clone())),
                Err(reason) => problems.push(PatternError {
                    rule: id.to_owned(),
                    field: format!("matchOutput[{i}]"),
                    pattern: out.pattern.clone(),
                    reason,
                }),
            }
        }
        CompiledRule { lines, counters, outputs, problems }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_apply() {
        let re = Pattern::new("^error", Some("i")).unwrap();
        assert!(re.is_match("ERROR: x"));
        let re = Pattern::new("^b$", Some("m")).unwrap();
        assert!(re.is_match("a\nb\nc"));
        assert!(!Pattern::new("^b$", None).unwrap().is_match("a\nb\nc"));
    }

    #[test]
    fn lookaround_falls_back_to_backtracking() {
        let re = Pattern::new(r"^(?!ok).*done", None).unwrap();
        assert!(matches!(re, Pattern::Backtracking(_)));
        assert!(matches!(Pattern::new(r"^\d+ ok", None).unwrap(), Pattern::Ascii(_)));
        assert!(matches!(Pattern::new("^━+$", None).unwrap(), Pattern::Linear(_)));
        assert!(re.is_match("build done"));
        assert!(!re.is_match("ok done"));
    }

    #[test]
    fn invalid_regex_disables_that_pattern_only() {
        let mut problems = Vec::new();
        let set = PatternSet::new(
            "x/y",
            "filters.skipPatterns",
            &["^Compiling".to_owned(), "(unclosed".to_owned(), "(?<=a)b".to_owned()],
            &mut problems,
        );
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].field, "filters.skipPatterns[1]");
        assert!(problems[0].to_string().contains("that pattern is disabled"));
        assert!(set.is_match("Compiling foo"));
        assert!(set.is_match("ab"));
        assert!(!set.is_match("cb"));
    }

    #[test]
    fn non_ascii_patterns_keep_unicode_semantics() {
        // In a byte regex `━+` would repeat the character's last byte only.
        assert!(Pattern::new("^━+$", None).unwrap().is_match("━━━━"));
        let mut problems = Vec::new();
        let set =
            PatternSet::new("x/y", "f", &["^━+$".to_owned(), "^ok$".to_owned()], &mut problems);
        assert!(set.is_match("━━━") && set.is_match("ok") && !set.is_match("nope"));
        // Digits and word characters are ASCII, as in JavaScript.
        assert!(!Pattern::new(r"^\d$", None).unwrap().is_match("٣"));
    }

    #[test]
    fn line_kinds_report_every_kind_a_line_matches() {
        let mut problems = Vec::new();
        let skip = vec![r"^test .* ok$".to_owned(), "(bad".to_owned()];
        let keep = vec!["^test".to_owned()];
        let evidence = vec!["FAILED$".to_owned(), "━━ FAIL".to_owned(), r"(?<!x)panic".to_owned()];
        let kinds = LineKinds::new(
            "x/y",
            [
                ("filters.skipPatterns", &skip),
                ("filters.keepPatterns", &keep),
                ("evidence", &evidence),
            ],
            &mut problems,
        );
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].field, "filters.skipPatterns[1]");
        let mut scratch = kinds.scratch();
        assert_eq!(kinds.kinds("test a ... ok", &mut scratch), SKIP | KEEP);
        assert_eq!(kinds.kinds("test b ... FAILED", &mut scratch), KEEP | EVIDENCE);
        assert_eq!(kinds.kinds("━━ FAIL here", &mut scratch), EVIDENCE);
        assert_eq!(kinds.kinds("a panic", &mut scratch), EVIDENCE);
        assert_eq!(kinds.kinds("nothing", &mut scratch), 0);
        assert!(kinds.has(SKIP) && kinds.has(KEEP) && kinds.has(EVIDENCE));
    }

    #[test]
    fn js_style_escapes_compile() {
        // Escaped slashes and hyphens are common in JavaScript-authored rules.
        assert!(Pattern::new(r"^src\/.*\.ts$", None).unwrap().is_match("src/a.ts"));
        assert!(Pattern::new(r"[\w\-]+", None).is_ok());
    }
}
