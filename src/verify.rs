//! Checks behind `tj rules verify`: every rule loads, every pattern compiles, and, with
//! fixtures, every case keeps what it must, drops what it should, is deterministic, holds
//! provenance, and every builtin rule is exercised by at least one fixture.
//!
//! It joins `rules` and `reduce`, so it sits above both: `reduce` uses `rules`, and nothing
//! below this module reaches back up into it.
//!
//! Pure: fixtures arrive parsed; `cli::rules` reads the files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use serde::Deserialize;

use crate::reduce::{self, ArtifactRef, Input, Options, Passthrough, Reduction};
use crate::rules::compiled::{Budget, CompiledRule, Compiler};
use crate::rules::select::{self, Query};
use crate::rules::{Layer, RuleSet, printable, printable_path};

/// A recorded command output with the lines that must survive (the corpus format).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Fixture {
    /// The case's name.
    pub id: String,
    /// The family it belongs to.
    pub family: String,
    /// The argv as run.
    pub argv: Vec<String>,
    /// The command string.
    pub command: Option<String>,
    /// The exit code.
    #[serde(rename = "exitCode")]
    pub exit_code: Option<i64>,
    /// The captured output (may hold ANSI and `\r`).
    pub text: String,
    /// Substrings that every rendition must contain.
    pub must_keep: Vec<String>,
    /// Substrings an adopted reduction must not contain.
    pub must_drop: Vec<String>,
    /// The rule the case must select, if stated.
    pub rule: Option<String>,
    /// How the text was captured.
    pub capture: Option<Capture>,
}

/// How a fixture's text was captured.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Capture {
    /// `pty` or `pipe`.
    pub mode: Option<String>,
    /// The PTY's width.
    pub cols: Option<u16>,
}

impl Fixture {
    /// The width of the PTY the text was captured from, if it was (the renderer wraps at it).
    pub fn cols(&self) -> Option<u16> {
        self.capture.as_ref().filter(|c| c.mode.as_deref() == Some("pty")).and_then(|c| c.cols)
    }

    /// The case as the engine's input: its bytes, command, exit code and capture width.
    pub fn input(&self) -> Input<'_> {
        Input {
            raw: self.text.as_bytes(),
            argv: &self.argv,
            command: self.command.as_deref(),
            tool_name: None,
            exit_code: self.exit_code,
            cols: self.cols(),
        }
    }
}

/// Reads every `*.json` fixture below `dir`, sorted by path.
pub fn read_fixtures(dir: &Path, problems: &mut Vec<String>) -> Result<Vec<Fixture>> {
    let mut paths = Vec::new();
    walk(dir, &mut paths)
        .with_context(|| format!("could not read fixtures in `{}`", dir.display()))?;
    paths.sort();
    let mut cases = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("could not read `{}`", path.display()))?;
        match serde_json::from_str::<Fixture>(&text) {
            Ok(mut case) => {
                if case.id.is_empty() {
                    case.id = path.display().to_string();
                }
                cases.push(case);
            }
            Err(err) => problems.push(format!("{}: not a fixture: {err}", path.display())),
        }
    }
    Ok(cases)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

/// The artifact every fixture check pretends was stored; its shape matches a real one.
pub fn fixture_artifact() -> ArtifactRef {
    ArtifactRef { id: "0123456789ab".to_owned(), path: "/tmp/tj/spill/0123456789ab.log".to_owned() }
}

/// Problems with the rule set itself, one message each.
pub fn check_rules(set: &RuleSet) -> Vec<String> {
    let mut problems: Vec<String> = set.problems.iter().map(ToString::to_string).collect();
    for rule in set.rules() {
        // Each rule as `tj run` would compile it: user and project rules on bounded engines.
        let budget = Budget::unlimited();
        let compiler = Compiler::for_layer(rule.layer, &budget);
        let compiled = CompiledRule::compile_with(&rule.rule, &compiler);
        for p in compiled.problems {
            problems.push(format!("{}: {p}", printable_path(&rule.path)));
        }
        if compiled.over_limit {
            problems.push(format!(
                "{}: its patterns are over tj's compile limit; the rule is skipped",
                printable_path(&rule.path)
            ));
        }
        for (field, re) in [
            ("match.commandRegex", &rule.rule.matcher.command_regex),
            ("match.outputRegex", &rule.rule.matcher.output_regex),
        ] {
            if let Some(re) = re
                && let Err(reason) = compiler.pattern(re, None)
            {
                let reason = reason.lines().last().unwrap_or_default();
                problems.push(format!(
                    "{}: invalid regex in {field}: {}",
                    printable_path(&rule.path),
                    printable(reason)
                ));
            }
        }
        if let Some(shape) = &rule.rule.shape
            && !crate::rules::schema::SHAPES.contains(&shape.as_str())
        {
            problems.push(format!(
                "{}: unknown shape (known: {}); ignored",
                printable_path(&rule.path),
                crate::rules::schema::SHAPES.join(", ")
            ));
        }
        if rule.layer == Layer::Builtin
            && rule.path.to_str().is_some_and(|p| p.starts_with("rules/"))
            && rule.path.to_str() != Some(&format!("rules/{}.json", rule.rule.id))
        {
            problems.push(format!(
                "{}: id `{}` does not match its path",
                rule.path.display(),
                rule.rule.id
            ));
        }
    }
    problems
}

/// The outcome of checking one fixture.
#[derive(Debug, Default)]
pub struct CaseReport {
    /// The rule it selected.
    pub rule: String,
    /// Whether a reduction was adopted.
    pub reduced: bool,
    /// Estimated tokens before and after.
    pub tokens: (usize, usize),
    /// Problems, one message each.
    pub problems: Vec<String>,
}

/// Checks one fixture against `set`.
pub fn check_fixture(set: &RuleSet, case: &Fixture) -> CaseReport {
    let artifact = fixture_artifact();
    let opts = Options { artifact: Some(&artifact), ..Options::default() };
    let input = case.input();
    let first = reduce::run(&input, set, &opts);
    let second = reduce::run(&input, set, &opts);
    let mut problems = run_problems(case, &first, &second);
    // A lossless route re-encodes lines (a path folded under its directory): a fact is
    // kept when the rendition shows it or decodes to it.
    let decoded = decoded_text(&first);
    for keep in &case.must_keep {
        let kept = first.text.contains(keep.as_str())
            || decoded.as_ref().is_some_and(|text| text.contains(keep.as_str()));
        if !kept {
            problems.push(format!("must_keep {keep:?} is missing"));
        }
    }
    if first.is_reduced() {
        let rendered = reduce::screen_width(case.text.as_bytes(), case.cols());
        problems.extend(reduced_problems(case, &first, &rendered, decoded.as_deref()));
        problems.extend(foreign_lines(&first, &rendered));
    }
    CaseReport {
        rule: first.rule.clone(),
        reduced: first.is_reduced(),
        tokens: (first.raw_tokens, first.reduced_tokens),
        problems: problems.into_iter().map(|msg| format!("{}: {msg}", case.id)).collect(),
    }
}

/// What is wrong with the run itself, whatever it adopted: a panic, a rule over its
/// budget, two runs that differ, another rule than the fixture names.
fn run_problems(case: &Fixture, first: &Reduction, second: &Reduction) -> Vec<String> {
    let mut problems = Vec::new();
    if first.passthrough == Some(Passthrough::Panicked) {
        problems.push("the reducer panicked".to_owned());
    }
    if let Some(why @ Passthrough::OverBudget { .. }) = &first.passthrough {
        problems.push(reduce::describe_passthrough(why));
    }
    if first.text != second.text {
        problems.push("two runs gave different renditions".to_owned());
    }
    if let Some(expected) = &case.rule
        && expected != &first.rule
    {
        problems.push(format!("selected `{}`, expected `{expected}`", first.rule));
    }
    problems
}

/// What is wrong with an adopted rendition of the output `rendered`: a `must_drop` line
/// left, no smaller than the original, an evidence line missing, a lossless part that does
/// not decode.
fn reduced_problems(
    case: &Fixture,
    first: &Reduction,
    rendered: &str,
    decoded: Option<&str>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for drop in &case.must_drop {
        if first.text.contains(drop.as_str()) {
            problems.push(format!("must_drop {drop:?} survived"));
        }
    }
    if first.reduced_chars >= rendered.chars().count().max(1) {
        problems.push(format!(
            "adopted a rendition of {} chars for {}",
            first.reduced_chars, first.raw_chars
        ));
    }
    for line in reduce::evidence_of(case.text.as_bytes(), case.cols()) {
        let decodes = decoded.is_some_and(|text| text.lines().any(|l| l == line));
        if !first.text.lines().any(|l| l == line) && !sampled_diagnostic(first, &line) && !decodes {
            problems.push(format!("evidence line {line:?} is missing"));
        }
    }
    if let Err(why) = round_trip(first, case) {
        problems.push(why);
    }
    problems
}

/// The lines of an adopted rendition that are neither the original's (`rendered`),
/// verbatim, nor marked as tj's (a search hit may shed the path the hit above it showed).
/// JSON shapes re-encode or re-indent: their lines are checked by the round trip (tables)
/// or by evidence and `must_keep` (elision), not line by line.
fn foreign_lines(first: &Reduction, rendered: &str) -> Vec<String> {
    let reencoded =
        matches!(first.shape, Some("json-table" | "ndjson-table" | "json-elided" | "compact-json"))
            || first.shape.is_some_and(reduce::data::is_route);
    if reencoded {
        return Vec::new();
    }
    let original: BTreeSet<&str> = reduce::split_lines(rendered).into_iter().collect();
    let mut problems = Vec::new();
    // The path of the last search hit shown: a hit of the same file may shed it.
    let mut path: Option<String> = None;
    for line in first.text.lines() {
        let ours = line.starts_with("[tj] ")
            || reduce::window::is_marker(line)
            || line.contains(" chars cut by tj]… ");
        let verbatim = original.contains(line);
        let regrouped =
            path.as_ref().is_some_and(|p| original.contains(format!("{p}:{line}").as_str()));
        if !ours && !verbatim && !regrouped {
            problems.push(format!("line {line:?} is neither from the original nor marked as tj's"));
        }
        if verbatim {
            path = reduce::window::hit_path(line).map(str::to_owned);
        } else if ours {
            path = None;
        }
    }
    problems
}

/// The text a lossless re-encoding (a data route, compact JSON) stands for, decoded from
/// the rendition; `None` for other renditions or one that does not decode (the round trip
/// reports that).
fn decoded_text(out: &reduce::Reduction) -> Option<String> {
    match out.shape? {
        "compact-json" => {
            let body =
                out.text.find(reduce::shape::compact_json::LEGEND).map(|at| &out.text[at..])?;
            reduce::shape::compact_json::decode(body).ok()
        }
        shape if reduce::data::is_route(shape) => {
            reduce::data::decode(shape, &out.text, out.omitted.lines() > 0)
                .ok()
                .map(|l| l.join("\n"))
        }
        _ => None,
    }
}

/// For the lossless JSON shapes, decodes the rendition and compares it with the original
/// (as values: key order within an object aside). Lossless must mean lossless.
fn round_trip(out: &reduce::Reduction, case: &Fixture) -> Result<(), String> {
    use crate::reduce::shape::json_table;
    let rendered = reduce::screen_width(case.text.as_bytes(), case.cols());
    let lines = reduce::split_lines(&rendered);
    let first = lines.iter().position(|l| !l.is_empty()).unwrap_or(0);
    let last = lines.iter().rposition(|l| !l.is_empty()).map_or(0, |i| i + 1);
    let body = &lines[first..last.max(first)];
    // The rendition without tj's exit-code header.
    let table = match out.text.split_once('\n') {
        Some((head, rest)) if head.starts_with("[tj] exit ") => rest,
        _ => out.text.as_str(),
    };
    match out.shape {
        Some("json-table") => {
            let decoded = json_table::decode(table)
                .map_err(|e| format!("the JSON table does not decode: {e}"))?;
            let original: serde_json::Value =
                serde_json::from_str(&body.join("\n")).map_err(|e| {
                    format!("a JSON table was adopted for output that is not JSON: {e}")
                })?;
            if decoded != original {
                return Err(
                    "the JSON table decodes to something other than the original".to_owned()
                );
            }
        }
        Some("ndjson-table") => ndjson_round_trip(table, body)?,
        Some("compact-json") => {
            let decoded = crate::reduce::shape::compact_json::decode(table)
                .map_err(|e| format!("the compact JSON does not decode: {e}"))?;
            if decoded != body.join("\n") {
                return Err("the compact JSON decodes to text other than the original".to_owned());
            }
        }
        Some(shape) if reduce::data::is_route(shape) => {
            let decoded = reduce::data::decode(shape, &out.text, out.omitted.lines() > 0)
                .map_err(|e| format!("the `{shape}` rendition does not decode: {e}"))?;
            // Blank lines aside (runs of them collapse), the decoded lines are the
            // original's in order, less exactly as many as the notice says were omitted.
            let original: Vec<&str> = body.iter().copied().filter(|l| !l.is_empty()).collect();
            let decoded: Vec<String> = decoded.into_iter().filter(|l| !l.is_empty()).collect();
            let missing = missing_lines(&original, &decoded).map_err(|line| {
                format!("the `{shape}` rendition decodes to a line not in the original: {line:?}")
            })?;
            if missing != out.omitted.lines() - out.omitted.blank {
                return Err(format!(
                    "the `{shape}` rendition stands for {} lines of {}, but says {} were omitted",
                    decoded.len(),
                    original.len(),
                    out.omitted.lines() - out.omitted.blank
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The JSON Lines table `table` decodes to the lines of `body`, each line of JSON as the
/// same value (key order within an object aside), each other line as the same text.
fn ndjson_round_trip(table: &str, body: &[&str]) -> Result<(), String> {
    use crate::reduce::shape::ndjson;
    let decoded =
        ndjson::decode(table).map_err(|e| format!("the JSON Lines table does not decode: {e}"))?;
    if decoded.len() != body.len() {
        return Err(format!(
            "the JSON Lines table decodes to {} lines, not {}",
            decoded.len(),
            body.len()
        ));
    }
    for (n, (line, value)) in body.iter().zip(&decoded).enumerate() {
        let same = match value {
            ndjson::LineValue::Json(v) => {
                serde_json::from_str::<serde_json::Value>(line).is_ok_and(|o| &o == v)
            }
            ndjson::LineValue::Verbatim(text) => text == line,
        };
        if !same {
            return Err(format!("the JSON Lines table's line {} decodes to something else", n + 1));
        }
    }
    Ok(())
}

/// How many lines of `original` are not in `decoded`, when `decoded` is `original` with
/// some lines left out (in order); otherwise the first decoded line that is not there.
fn missing_lines(original: &[&str], decoded: &[String]) -> Result<usize, String> {
    let mut rest = original.iter();
    let mut missing = 0;
    for line in decoded {
        loop {
            match rest.next() {
                Some(o) if *o == line.as_str() => break,
                Some(_) => missing += 1,
                None => return Err(line.clone()),
            }
        }
    }
    Ok(missing + rest.count())
}

/// Whether `line`, a diagnostic the `diagnostics` shape sampled away, is accounted for by
/// its kind's summary line.
fn sampled_diagnostic(out: &reduce::Reduction, line: &str) -> bool {
    use crate::reduce::shape::diagnostics;
    out.shape == Some("diagnostics")
        && diagnostics::location_len(line).is_some_and(|at| {
            out.text.contains(&format!("× {},", diagnostics::signature(&line[at..])))
        })
}

/// Builtin rules that no fixture selects.
pub fn uncovered_rules(set: &RuleSet, cases: &[Fixture]) -> Vec<String> {
    let mut covered = BTreeSet::new();
    for case in cases {
        let query = Query {
            argv: &case.argv,
            command: case.command.as_deref(),
            tool_name: None,
            exit_code: case.exit_code,
        };
        let rendered = reduce::screen_width(case.text.as_bytes(), case.cols());
        let lines = reduce::split_lines(&rendered);
        covered.insert(select::select(set, &query, Some(&lines)).rule.rule.id.clone());
    }
    set.rules()
        .iter()
        .filter(|r| r.layer == Layer::Builtin && !covered.contains(&r.rule.id))
        .map(|r| r.rule.id.clone())
        .collect()
}
