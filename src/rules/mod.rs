//! Rules: the schema, the builtin set embedded at build time, the user and project layers,
//! command identity and selection.
//!
//! Loading parses every rule's JSON (selection needs each rule's `match`), but compiles the
//! regexes of the selected rule only ([`compiled`]). Layers override by `id`: builtin, then
//! user (`<config dir>/rules`), then project (`.tokenjuice/rules`); `generic/fallback` is
//! always tried last.

pub mod compiled;
pub mod identity;
pub mod load;
pub mod schema;
pub mod select;

use std::fmt;
use std::path::PathBuf;

pub use schema::Rule;

/// The id of the rule that matches when nothing else does.
pub const FALLBACK_ID: &str = "generic/fallback";

/// Where a rule came from; later layers win by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// Embedded in the binary from `rules/`.
    Builtin,
    /// `<config dir>/rules/*.json`.
    User,
    /// `.tokenjuice/rules/*.json`, found walking up from the working directory.
    Project,
}

impl Layer {
    /// The lowercase name used in listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Builtin => "builtin",
            Layer::User => "user",
            Layer::Project => "project",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One builtin rule file, embedded by `build.rs`.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    /// `<family>/<name>`, from the file's path.
    pub id: &'static str,
    /// `rules/<family>/<name>.json`.
    pub path: &'static str,
    /// The file's text.
    pub json: &'static str,
    /// The rule's `match.argv0`, read at build time; empty when it has none (or it could
    /// not be read plainly). A rule with names here can only be selected for one of them,
    /// so [`RuleSet::builtin_for`] skips parsing it for any other program.
    pub argv0: &'static [&'static str],
}

impl Builtin {
    /// Whether the rule could be selected for `program` (the command's identity argv0).
    pub fn could_match(&self, program: &str) -> bool {
        self.argv0.is_empty() || self.argv0.contains(&program)
    }
}

static BUILTINS: &[Builtin] = include!(concat!(env!("OUT_DIR"), "/builtin_rules.rs"));

/// The builtin rule files, sorted by path.
pub fn builtin_files() -> &'static [Builtin] {
    BUILTINS
}

/// A parsed rule and its provenance.
#[derive(Clone, Debug)]
pub struct LoadedRule {
    /// The rule.
    pub rule: Rule,
    /// Its layer.
    pub layer: Layer,
    /// Its file (`rules/…` for builtins).
    pub path: PathBuf,
}

/// Why a rule file was skipped, or what is wrong with it.
#[derive(Debug)]
pub enum LoadError {
    /// The file or directory could not be read.
    Read {
        /// The path.
        path: PathBuf,
        /// The cause.
        err: std::io::Error,
    },
    /// The file is not a valid rule document.
    Parse {
        /// The path.
        path: PathBuf,
        /// The cause.
        err: serde_json::Error,
    },
    /// The document parsed but is unusable (no id, no family).
    Invalid {
        /// The path.
        path: PathBuf,
        /// What is missing.
        reason: String,
    },
    /// Keys this version does not know; the rule still loads.
    UnknownKeys {
        /// The path.
        path: PathBuf,
        /// Dotted key paths.
        keys: Vec<String>,
    },
}

impl LoadError {
    /// Returns true if and only if the rule was skipped (not merely warned about).
    pub fn is_fatal(&self) -> bool {
        !matches!(self, LoadError::UnknownKeys { .. })
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Read { path, err } => {
                write!(f, "could not read rule `{}`: {err}; skipped", path.display())
            }
            LoadError::Parse { path, err } => {
                write!(f, "could not parse rule `{}`: {err}; skipped", path.display())
            }
            LoadError::Invalid { path, reason } => {
                write!(f, "invalid rule `{}`: {reason}; skipped", path.display())
            }
            LoadError::UnknownKeys { path, keys } => write!(
                f,
                "rule `{}` has keys this tj does not know ({}); they are ignored",
                path.display(),
                keys.join(", ")
            ),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Read { err, .. } => Some(err),
            LoadError::Parse { err, .. } => Some(err),
            _ => None,
        }
    }
}

/// The merged rule set: one rule per id, the fallback last.
#[derive(Debug, Default)]
pub struct RuleSet {
    rules: Vec<LoadedRule>,
    /// Problems met while loading, for one warning each.
    pub problems: Vec<LoadError>,
}

impl RuleSet {
    /// Builds a set from already-read sources. Pure: `load` does the reading.
    ///
    /// `check_keys` lists unknown keys (worth it for user and project files; builtins are
    /// checked by a test instead, to keep start-up cheap).
    pub fn from_sources<'a>(
        sources: impl IntoIterator<Item = (Layer, PathBuf, &'a str)>,
        check_keys: bool,
    ) -> RuleSet {
        let mut set = RuleSet::default();
        for (layer, path, text) in sources {
            if let Some(rule) =
                set.parse_one(layer, path, text, check_keys || layer != Layer::Builtin)
            {
                set.insert(rule);
            }
        }
        set.finish()
    }

    /// The builtin rules alone.
    pub fn builtin() -> RuleSet {
        RuleSet::from_sources(
            builtin_files().iter().map(|b| (Layer::Builtin, PathBuf::from(b.path), b.json)),
            false,
        )
    }

    /// The builtin rules that could be selected for `program` (the identity's argv0): the
    /// rules naming it in `argv0` and the rules with no `argv0`. Selection over this set
    /// picks what it would pick over [`RuleSet::builtin`], parsing a handful of rules
    /// instead of all of them.
    pub fn builtin_for(program: &str) -> RuleSet {
        RuleSet::from_sources(
            builtin_files()
                .iter()
                .filter(|b| b.could_match(program))
                .map(|b| (Layer::Builtin, PathBuf::from(b.path), b.json)),
            false,
        )
    }

    fn parse_one(
        &mut self,
        layer: Layer,
        path: PathBuf,
        text: &str,
        check_keys: bool,
    ) -> Option<LoadedRule> {
        let rule: Rule = match serde_json::from_str(text) {
            Ok(rule) => rule,
            Err(err) => {
                self.problems.push(LoadError::Parse { path, err });
                return None;
            }
        };
        if rule.id.trim().is_empty() {
            self.problems
                .push(LoadError::Invalid { path, reason: "`id` is missing or empty".into() });
            return None;
        }
        if check_keys && let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) {
            let keys = schema::unknown_keys(&doc);
            if !keys.is_empty() {
                self.problems.push(LoadError::UnknownKeys { path: path.clone(), keys });
            }
        }
        Some(LoadedRule { rule, layer, path })
    }

    /// Adds `rule`, replacing any rule with the same id (later layers win).
    pub fn insert(&mut self, rule: LoadedRule) {
        match self.rules.iter_mut().find(|r| r.rule.id == rule.rule.id) {
            Some(slot) => *slot = rule,
            None => self.rules.push(rule),
        }
    }

    /// Orders the set: by id, with the fallback last (and present: a built-in default when
    /// no file provides one, so selection always succeeds).
    pub fn finish(mut self) -> RuleSet {
        self.rules.sort_by(|a, b| {
            (a.rule.id == FALLBACK_ID)
                .cmp(&(b.rule.id == FALLBACK_ID))
                .then_with(|| a.rule.id.cmp(&b.rule.id))
        });
        if self.rules.last().is_none_or(|r| r.rule.id != FALLBACK_ID) {
            self.rules.push(LoadedRule {
                rule: default_fallback(),
                layer: Layer::Builtin,
                path: PathBuf::from("(built into tj)"),
            });
        }
        self
    }

    /// The rules, fallback last.
    pub fn rules(&self) -> &[LoadedRule] {
        &self.rules
    }

    /// The fallback rule.
    pub fn fallback(&self) -> &LoadedRule {
        // finish() guarantees the fallback is last; an empty set cannot be built.
        &self.rules[self.rules.len() - 1]
    }

    /// The rule with this id.
    pub fn get(&self, id: &str) -> Option<&LoadedRule> {
        self.rules.iter().find(|r| r.rule.id == id)
    }
}

fn default_fallback() -> Rule {
    Rule {
        id: FALLBACK_ID.to_owned(),
        family: "generic".to_owned(),
        description: Some("Anything no other rule claims: head, tail and evidence".to_owned()),
        transforms: schema::Transforms {
            dedupe_adjacent: true,
            trim_empty_edges: true,
            ..schema::Transforms::default()
        },
        summarize: Some(schema::Summarize { head: Some(40), tail: Some(40) }),
        failure: Some(schema::Failure {
            preserve_on_failure: true,
            head: Some(40),
            tail: Some(60),
        }),
        ..Rule::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(layer: Layer, name: &str, json: &str) -> (Layer, PathBuf, String) {
        (layer, PathBuf::from(name), json.to_owned())
    }

    fn build(sources: &[(Layer, PathBuf, String)]) -> RuleSet {
        RuleSet::from_sources(sources.iter().map(|(l, p, t)| (*l, p.clone(), t.as_str())), true)
    }

    #[test]
    fn later_layer_wins_by_id() {
        let set = build(&[
            src(
                Layer::Builtin,
                "b.json",
                r#"{"id":"tests/x","family":"tests","match":{"argv0":["x"]}}"#,
            ),
            src(
                Layer::Project,
                "p.json",
                r#"{"id":"tests/x","family":"mine","match":{"argv0":["x"]}}"#,
            ),
        ]);
        let rule = set.get("tests/x").unwrap();
        assert_eq!(rule.layer, Layer::Project);
        assert_eq!(rule.rule.family, "mine");
    }

    #[test]
    fn build_time_argv0_index_agrees_with_every_builtin_rule() {
        for file in builtin_files() {
            let rule: Rule = serde_json::from_str(file.json).unwrap();
            let parsed: Vec<&str> =
                rule.matcher.argv0.iter().flatten().map(String::as_str).collect();
            assert_eq!(file.argv0, parsed.as_slice(), "{}", file.path);
        }
    }

    #[test]
    fn builtin_for_keeps_the_program_s_rules_and_those_without_argv0() {
        let set = RuleSet::builtin_for("cargo");
        assert!(set.get("tests/cargo-test").is_some());
        assert!(set.get("generic/fallback").is_some());
        assert!(set.get("generic/help").is_some());
        assert!(set.get("tests/pytest").is_none());
        assert!(set.rules().len() < RuleSet::builtin().rules().len() / 4);
    }

    #[test]
    fn malformed_rule_is_skipped_with_one_problem() {
        let set = build(&[
            src(Layer::User, "bad.json", r#"{"id": "a/b", "match": "#),
            src(Layer::User, "noid.json", r#"{"family":"x","match":{}}"#),
            src(Layer::User, "ok.json", r#"{"id":"a/ok","family":"a","match":{}}"#),
        ]);
        assert_eq!(set.problems.len(), 2);
        assert!(set.problems[0].to_string().contains("bad.json"));
        assert!(set.problems[1].to_string().contains("`id` is missing"));
        assert!(set.get("a/ok").is_some());
    }

    #[test]
    fn fallback_is_always_last_and_present() {
        let set = build(&[src(Layer::User, "z.json", r#"{"id":"zz/z","family":"z","match":{}}"#)]);
        assert_eq!(set.fallback().rule.id, FALLBACK_ID);
        assert_eq!(set.rules().last().unwrap().rule.id, FALLBACK_ID);
    }

    #[test]
    fn every_builtin_rule_parses_with_known_keys_and_id_matches_path() {
        let files = builtin_files();
        assert!(!files.is_empty());
        for file in files {
            let rule: Rule = serde_json::from_str(file.json)
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", file.path));
            assert_eq!(rule.id, file.id, "{}: id must be <family dir>/<file stem>", file.path);
            let doc: serde_json::Value = serde_json::from_str(file.json).unwrap();
            assert_eq!(schema::unknown_keys(&doc), Vec::<String>::new(), "{}", file.path);
            let compiled = compiled::CompiledRule::compile(&rule);
            assert!(compiled.problems.is_empty(), "{}: {:?}", file.path, compiled.problems);
        }
    }
}
