//! The rule file format: a superset of tokenjuice's JSON rules (DESIGN.md "Rules").
//!
//! A tokenjuice rule deserialises into [`Rule`] unchanged. tj's extensions are opt-in
//! capabilities a rule names (`evidence`, `verbatim`, `match.commandRegex`,
//! `match.exitCodes`, `match.outputRegex`); the engine never looks at a rule's `id` to
//! decide how to reduce (STYLE.md 2.1, boundary 6). This module owns the shape of the data
//! and the list of known keys; validation of regexes lives in `compiled`.

use serde::{Deserialize, Serialize};

/// One reduction rule.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Rule {
    /// `<family>/<name>`; a later layer's rule with the same id replaces an earlier one.
    pub id: String,
    /// Free-form family name (`tests`, `build`, …), reported in classifications.
    pub family: String,
    /// One sentence for `tj rules list`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Added, times 1000, to the specificity score in selection.
    pub priority: i64,
    /// Which commands the rule applies to.
    #[serde(rename = "match")]
    pub matcher: Match,
    /// Whole-text transforms.
    pub transforms: Transforms,
    /// Line filters.
    pub filters: Filters,
    /// Short messages that replace the whole output when it matches.
    pub match_output: Vec<OutputMatch>,
    /// The message when no line is left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_empty: Option<String>,
    /// Named line counts, reported as facts.
    pub counters: Vec<Counter>,
    /// Which lines counters see.
    pub counter_source: CounterSource,
    /// The head/tail window on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarize: Option<Summarize>,
    /// The head/tail window on failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// tj: lines matching any of these are evidence, in addition to the built-in classifier.
    pub evidence: Vec<String>,
    /// tj: the output is data a developer is about to read (`git diff`): no line is dropped.
    pub verbatim: bool,
    /// tj: a named reducer for a shape of output the line window handles badly; see
    /// [`SHAPES`]. An unknown name is reported by `tj rules verify` and ignored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// tj: whether the agent adapters rewrite commands this rule selects to run through
    /// `tj run` (`tj rewrite`). Absent: yes for the `tests`, `build`, `lint` and `install`
    /// families, no for the others. Only builtin and user rules are consulted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrap: Option<bool>,
    /// tj: whether the output is a verdict with its evidence or data the agent asked for
    /// (see [`Kind`]). Absent: [`Rule::kind`] decides by family.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
}

/// What a rule's output is to the agent, which decides what a reduction may drop.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A test, build, lint or install run: the verdict and its evidence matter, the rest is
    /// noise, and the window may drop it.
    Diagnostic,
    /// A listing, search, query, table, document or log the agent asked to read: every
    /// record is an answer. Under the data budget only lossless re-encodings apply; past it
    /// a sampled window keeps head, tail, a sample of the middle and every alarm.
    Data,
}

/// The families whose rules are [`Kind::Data`] unless they say otherwise.
pub const DATA_FAMILIES: &[&str] = &["search", "filesystem", "databases", "json"];

/// The shapes a rule may name in `shape`.
///
/// - `search-hits`: `path:N:text` hits (grep, rg, git grep; or rg's `--heading` form) are
///   grouped by file: each file keeps its first [`HITS_PER_FILE`] hits, the first `head`
///   and last `tail` *files* are kept (the window counts files, not lines), and a hit that
///   follows another of the same file sheds its repeated `path:` prefix.
/// - `table`: an aligned table (`ps`, `df`, `kubectl get`, SQL results) keeps its header,
///   its first `head` and last `tail` rows and a sample of the middle; rows with a bad
///   status are evidence and always kept.
/// - `log`: runs of lines that differ only in timestamps, ids, durations or counts keep
///   their first and last lines; the rest folds into one marker. Warnings and errors
///   never fold.
/// - `test-run`: the header's counts come from the runner's own summary lines (summed
///   over cargo's targets, never counting a failure twice) instead of the counters.
/// - `diagnostics`: a list of located diagnostics (`path:12:80: E501 …`) longer than 512
///   items keeps the first 3 of each kind (the message with numbers and quoted names
///   masked) and one `[tj] N × kind, 3 shown` line per kind for the rest.
///
/// JSON needs no shape: any output that is one JSON document or JSON Lines is first tried
/// as a lossless table, then (unless the rule is `verbatim`) elided structurally.
pub const SHAPES: &[&str] = &["search-hits", "table", "log", "test-run", "diagnostics"];

/// Hits each file keeps under the `search-hits` shape.
pub const HITS_PER_FILE: usize = 8;

/// The command constraints of a rule; every present field must hold.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Match {
    /// The harness tool name must be one of these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_names: Option<Vec<String>>,
    /// The real program (after wrapper stripping) must be one of these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argv0: Option<Vec<String>>,
    /// git's subcommand must be one of these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_subcommands: Option<Vec<String>>,
    /// tj: the subcommand (the first words after argv0 that are not options, `+toolchain`
    /// aside) must be one of these; `"pip install"` names two words, `""` no subcommand at
    /// all. The regex-free way to tell `cargo test` from `cargo build`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subcommands: Option<Vec<String>>,
    /// Every group's words must all be arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argv_includes: Option<Vec<Vec<String>>>,
    /// At least one group's words must all be arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argv_includes_any: Option<Vec<Vec<String>>>,
    /// Every string must occur in the command at word boundaries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_includes: Option<Vec<String>>,
    /// At least one string must occur in the command at word boundaries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_includes_any: Option<Vec<String>>,
    /// tj: a regex the normalized command string must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_regex: Option<String>,
    /// tj: the exit code must be one of these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_codes: Option<Vec<i64>>,
    /// tj: a regex some output line must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_regex: Option<String>,
}

/// Whole-text transforms.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Transforms {
    /// Accepted for compatibility: tj always renders the terminal and strips ANSI.
    pub strip_ansi: bool,
    /// Accepted for compatibility; JSON is left to tj's lossless shape reducers.
    pub pretty_print_json: bool,
    /// Runs of identical lines keep their first line and a count.
    pub dedupe_adjacent: bool,
    /// Blank lines at the start and end are dropped.
    pub trim_empty_edges: bool,
}

/// Line filters. Evidence lines are immune to both.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Filters {
    /// Lines matching any of these are dropped.
    pub skip_patterns: Vec<String>,
    /// When some line matches one of these, only matching lines are kept.
    pub keep_patterns: Vec<String>,
}

/// A message that replaces the whole output when `pattern` matches it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct OutputMatch {
    /// Regex over the whole text (trimmed of blank edges).
    pub pattern: String,
    /// What the agent sees instead.
    pub message: String,
    /// JS-style flags: `i`, `m`, `s` (others ignored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<String>,
}

/// A named count of matching lines.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Counter {
    /// The fact's name, e.g. `failed test`.
    pub name: String,
    /// Regex a line must match to count.
    pub pattern: String,
    /// JS-style flags: `i`, `m`, `s` (others ignored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<String>,
}

/// Which lines counters see.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum CounterSource {
    /// After skip and keep filters (tokenjuice's default).
    #[default]
    PostKeep,
    /// After skip filters, before keep filters.
    PreKeep,
}

/// The window when the command succeeded.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct Summarize {
    /// Lines kept from the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<usize>,
    /// Lines kept from the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail: Option<usize>,
}

/// The window when the command failed.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct Failure {
    /// Use this window (not `summarize`) when the exit code is non-zero.
    pub preserve_on_failure: bool,
    /// Lines kept from the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<usize>,
    /// Lines kept from the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail: Option<usize>,
}

/// The window defaults tokenjuice uses, so its rules behave the same here.
pub const DEFAULT_HEAD: usize = 6;
/// See [`DEFAULT_HEAD`].
pub const DEFAULT_TAIL: usize = 6;
/// See [`DEFAULT_HEAD`].
pub const DEFAULT_FAILURE_HEAD: usize = 6;
/// See [`DEFAULT_HEAD`].
pub const DEFAULT_FAILURE_TAIL: usize = 12;

impl Rule {
    /// The rule's [`Kind`]: its `kind` key, else data for the [`DATA_FAMILIES`] and
    /// diagnostic for every other family.
    pub fn kind(&self) -> Kind {
        self.kind.unwrap_or(if DATA_FAMILIES.contains(&self.family.as_str()) {
            Kind::Data
        } else {
            Kind::Diagnostic
        })
    }

    /// The `(head, tail)` window for a run that ended with `exit_code`.
    pub fn window(&self, exit_code: Option<i64>) -> (usize, usize) {
        let failed = exit_code.is_some_and(|code| code != 0);
        match self.failure {
            Some(f) if failed && f.preserve_on_failure => {
                (f.head.unwrap_or(DEFAULT_FAILURE_HEAD), f.tail.unwrap_or(DEFAULT_FAILURE_TAIL))
            }
            _ => {
                let s = self.summarize.unwrap_or_default();
                (s.head.unwrap_or(DEFAULT_HEAD), s.tail.unwrap_or(DEFAULT_TAIL))
            }
        }
    }
}

const RULE_KEYS: &[&str] = &[
    "id",
    "family",
    "description",
    "priority",
    "match",
    "transforms",
    "filters",
    "matchOutput",
    "onEmpty",
    "counters",
    "counterSource",
    "summarize",
    "failure",
    "evidence",
    "verbatim",
    "shape",
    "wrap",
    "kind",
    "$schema",
];
const MATCH_KEYS: &[&str] = &[
    "toolNames",
    "argv0",
    "gitSubcommands",
    "subcommands",
    "argvIncludes",
    "argvIncludesAny",
    "commandIncludes",
    "commandIncludesAny",
    "commandRegex",
    "exitCodes",
    "outputRegex",
];
const TRANSFORM_KEYS: &[&str] =
    &["stripAnsi", "prettyPrintJson", "dedupeAdjacent", "trimEmptyEdges"];
const FILTER_KEYS: &[&str] = &["skipPatterns", "keepPatterns"];
const WINDOW_KEYS: &[&str] = &["head", "tail", "preserveOnFailure"];
const PATTERN_KEYS: &[&str] = &["pattern", "message", "flags", "name"];

/// Lists the keys of a rule document that this version of tj does not know, as dotted
/// paths (`match.argvRegex`). Unknown keys are ignored when loading (forward
/// compatibility); the loader warns about them and `tj rules verify` reports them.
pub fn unknown_keys(doc: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(map) = doc.as_object() else { return out };
    for (key, value) in map {
        if !RULE_KEYS.contains(&key.as_str()) {
            out.push(key.clone());
            continue;
        }
        let (known, list): (&[&str], bool) = match key.as_str() {
            "match" => (MATCH_KEYS, false),
            "transforms" => (TRANSFORM_KEYS, false),
            "filters" => (FILTER_KEYS, false),
            "summarize" | "failure" => (WINDOW_KEYS, false),
            "matchOutput" | "counters" => (PATTERN_KEYS, true),
            _ => continue,
        };
        let objects: Vec<&serde_json::Map<String, serde_json::Value>> = if list {
            value
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_object()).collect())
                .unwrap_or_default()
        } else {
            value.as_object().into_iter().collect()
        };
        for object in objects {
            for inner in object.keys() {
                if !known.contains(&inner.as_str()) {
                    let path = format!("{key}.{inner}");
                    if !out.contains(&path) {
                        out.push(path);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenjuice_rule_deserialises() {
        let json = r#"{
          "id": "tests/cargo-test", "family": "test-results",
          "match": {"toolNames": ["exec"], "argv0": ["cargo"], "argvIncludes": [["test"]]},
          "transforms": {"stripAnsi": true, "dedupeAdjacent": true, "trimEmptyEdges": true},
          "filters": {"skipPatterns": ["^\\s*Compiling .+"]},
          "summarize": {"head": 12, "tail": 10},
          "failure": {"preserveOnFailure": true, "head": 18, "tail": 18},
          "counters": [{"name": "failed test", "pattern": "FAILED"}]
        }"#;
        let rule: Rule = serde_json::from_str(json).unwrap();
        assert_eq!(rule.matcher.argv0.as_deref(), Some(&["cargo".to_owned()][..]));
        assert_eq!(rule.window(Some(101)), (18, 18));
        assert_eq!(rule.window(Some(0)), (12, 10));
        assert_eq!(rule.counters[0].name, "failed test");
    }

    #[test]
    fn missing_windows_use_tokenjuice_defaults() {
        let rule: Rule = serde_json::from_str(r#"{"id":"a/b","family":"a","match":{}}"#).unwrap();
        assert_eq!(rule.window(None), (DEFAULT_HEAD, DEFAULT_TAIL));
        assert_eq!(rule.window(Some(1)), (DEFAULT_HEAD, DEFAULT_TAIL));
    }

    #[test]
    fn unknown_keys_are_listed_with_their_path() {
        let doc: serde_json::Value = serde_json::from_str(
            r#"{"id":"a/b","family":"a","match":{"argv0":["x"],"argvRegex":"y"},"shiny":1,
                "counters":[{"name":"n","pattern":"p","weight":2}]}"#,
        )
        .unwrap();
        assert_eq!(unknown_keys(&doc), vec!["counters.weight", "match.argvRegex", "shiny"]);
    }
}
