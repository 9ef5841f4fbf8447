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
    /// The first word of each of the rule's `match.subcommands`, read at build time; empty
    /// when it has none (or one matches a command with no word). A rule with words here can
    /// only be selected for a command line holding one of them.
    pub words: &'static [&'static str],
}

impl Builtin {
    /// Whether the rule could be selected for `argv`, the command's identity (empty for a
    /// compound command, which only the fallback takes).
    pub fn could_match(&self, argv: &[String]) -> bool {
        let program = argv.first().map_or("", String::as_str);
        (self.argv0.is_empty() || self.argv0.contains(&program))
            && (self.words.is_empty()
                || argv.iter().skip(1).any(|word| self.words.contains(&word.as_str())))
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
///
/// Rule files come from repositories nobody vetted, so no message quotes what a file holds
/// (its keys, values or patterns: a hostile file can put terminal escapes or secrets there).
/// Messages name the path, escaped by [`printable`], and the kind of problem, with the line
/// and column where there is one.
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
        /// The cause. Its own message quotes the file (`invalid type: string "…"`), so
        /// `Display` shows [`describe_json_error`] instead and `source()` does not expose it.
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
        /// Dotted key paths, as the file spells them.
        keys: Vec<String>,
        /// The file's layer. Keys of the user's own files are named (escaped: a typo is
        /// the usual cause); those of a project's files are only counted (see [`LoadError`]).
        layer: Layer,
    },
    /// A FIFO, device, socket or directory where a rule file was expected: never opened.
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is (`a FIFO`, `a character device`, …).
        kind: &'static str,
    },
    /// A symlink (or a layer directory) leading outside what the layer may read: the
    /// repository for project rules, the layer's own directory for user rule directories.
    Escapes {
        /// The path.
        path: PathBuf,
        /// What it leads outside of: `the repository`, `the user rules directory`.
        outside: &'static str,
    },
    /// A directory that was not walked, or not walked to the end.
    NotWalked {
        /// The path.
        path: PathBuf,
        /// Why (a loop, a limit).
        reason: String,
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
                write!(f, "could not read rule `{}`: {err}; skipped", printable_path(path))
            }
            LoadError::Parse { path, err } => write!(
                f,
                "could not parse rule `{}`: {}; skipped",
                printable_path(path),
                describe_json_error(err)
            ),
            LoadError::Invalid { path, reason } => {
                write!(f, "invalid rule `{}`: {reason}; skipped", printable_path(path))
            }
            LoadError::UnknownKeys { path, keys, layer } => {
                let which = match layer {
                    Layer::Project => where_keys_are(keys),
                    _ => keys
                        .iter()
                        .map(|k| printable(k).into_owned())
                        .collect::<Vec<_>>()
                        .join(", "),
                };
                write!(
                    f,
                    "rule `{}` has {} this tj does not know ({which}); they are ignored",
                    printable_path(path),
                    plural(keys.len(), "key"),
                )
            }
            LoadError::NotRegular { path, kind } => write!(
                f,
                "rule `{}` is not a regular file ({kind}); skipped without opening it",
                printable_path(path)
            ),
            LoadError::Escapes { path, outside } => {
                write!(f, "`{}` leads outside {outside}; not followed", printable_path(path))
            }
            LoadError::NotWalked { path, reason } => {
                write!(f, "rules directory `{}` not walked further: {reason}", printable_path(path))
            }
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Read { err, .. } => Some(err),
            // Not `Parse`: serde_json's message quotes the file (see `LoadError`).
            _ => None,
        }
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// Where unknown keys are, without naming them: `2 at the top level, 1 in `match``. The
/// parents are keys tj knows (only known objects are looked into), so they are safe to show.
fn where_keys_are(keys: &[String]) -> String {
    let mut places: Vec<(&str, usize)> = Vec::new();
    for key in keys {
        let parent = key.split_once('.').map_or("", |(parent, _)| parent);
        match places.iter_mut().find(|(p, _)| *p == parent) {
            Some((_, n)) => *n += 1,
            None => places.push((parent, 1)),
        }
    }
    places
        .iter()
        .map(|(parent, n)| match *parent {
            "" => format!("{n} at the top level"),
            parent => format!("{n} in `{}`", printable(parent)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The longest text [`printable`] shows; the rest is cut with `…`.
pub const PRINTABLE_MAX_CHARS: usize = 512;

/// `text` made safe to print on a terminal: control characters (C0, DEL, C1) and the
/// invisible format characters that reorder or hide text (bidi overrides and isolates,
/// zero-width characters, BOM) become `\u{…}` escapes (`\n`, `\r`, `\t` for those three), and
/// text past [`PRINTABLE_MAX_CHARS`] characters is cut. Borrows when nothing needs escaping.
///
/// For names that come from untrusted files and directories (paths, rule ids) in warnings
/// and listings.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = crate::diag::is_unsafe_char;
    let too_long =
        text.len() > PRINTABLE_MAX_CHARS && text.chars().nth(PRINTABLE_MAX_CHARS).is_some();
    if !too_long && !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(PRINTABLE_MAX_CHARS * 2) + 8);
    for (i, c) in text.chars().enumerate() {
        if i == PRINTABLE_MAX_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if unsafe_char(c) => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// [`printable`] for a path (lossy where it is not UTF-8).
pub fn printable_path(path: &std::path::Path) -> String {
    printable(&path.to_string_lossy()).into_owned()
}

/// What is wrong with a JSON document, without quoting it.
///
/// serde_json's messages quote the offending value (`invalid type: string "…", expected a
/// sequence`, `unknown variant `…``): this keeps the kind of problem, what tj expected (text
/// from tj's own types, never from the file) and the line and column.
pub fn describe_json_error(err: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let message = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let message = message.strip_suffix(&suffix).unwrap_or(&message);
    let expected = |m: &str| {
        m.rsplit_once(", expected ")
            .map(|(_, e)| {
                format!(" (expected {})", printable(e.get(..e.len().min(120)).unwrap_or("")))
            })
            .unwrap_or_default()
    };
    let what = match err.classify() {
        Category::Io => "could not be read".to_owned(),
        Category::Eof => "the document ends early".to_owned(),
        // Syntax messages are serde_json's fixed texts (`expected value`, `trailing comma`).
        Category::Syntax => format!("not valid JSON: {}", printable(message)),
        Category::Data => {
            if message.starts_with("invalid type:") {
                format!("a value has the wrong type{}", expected(message))
            } else if message.starts_with("invalid value:") {
                format!("a value is out of range{}", expected(message))
            } else if message.starts_with("invalid length") {
                format!("a list has the wrong length{}", expected(message))
            } else if message.starts_with("unknown variant") {
                format!("a value is not one tj knows{}", expected(message))
            } else if message.starts_with("missing field `")
                || message.starts_with("duplicate field `")
            {
                // The field's name is tj's own (from the schema), not the file's.
                printable(message).into_owned()
            } else {
                "the document does not have the rule format".to_owned()
            }
        }
    };
    if err.line() == 0 {
        what
    } else {
        format!("{what} at line {}, column {}", err.line(), err.column())
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

    /// The builtin rules that could be selected for `argv` (the command's identity; empty
    /// for a compound command): those whose `argv0` and `subcommands` admit it (see
    /// [`Builtin::could_match`]). Selection over this set picks what it would pick over
    /// [`RuleSet::builtin`], parsing a handful of rules instead of all of them.
    pub fn builtin_for(argv: &[String]) -> RuleSet {
        RuleSet::from_sources(
            builtin_files()
                .iter()
                .filter(|b| b.could_match(argv))
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
                self.problems.push(LoadError::UnknownKeys { path: path.clone(), keys, layer });
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
        let argv = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        let set = RuleSet::builtin_for(&argv(&["cargo", "test", "--lib"]));
        assert!(set.get("tests/cargo-test").is_some());
        assert!(set.get("generic/fallback").is_some());
        assert!(set.get("generic/help").is_some());
        assert!(set.get("tests/pytest").is_none());
        // Another subcommand's rule is not parsed.
        assert!(set.get("build/cargo-build").is_none());
        assert!(set.rules().len() < RuleSet::builtin().rules().len() / 4);
        // A subcommand after an option's value still counts.
        let set = RuleSet::builtin_for(&argv(&["cargo", "--color", "never", "build"]));
        assert!(set.get("build/cargo-build").is_some());
        // A compound command: the rules without argv0 only.
        let set = RuleSet::builtin_for(&[]);
        assert!(set.get("generic/fallback").is_some());
        assert!(set.get("tests/cargo-test").is_none());
    }

    #[test]
    fn subcommand_words_are_the_first_words_of_each_subcommand() {
        let file = |id: &str| builtin_files().iter().find(|b| b.id == id).unwrap();
        assert_eq!(file("tests/cargo-test").words, ["t", "test"]);
        assert_eq!(file("tests/cargo-nextest").words, ["nextest"]);
        assert!(file("generic/fallback").words.is_empty());
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
    #[test]
    fn unknown_keys_are_named_for_the_user_and_only_counted_for_a_project() {
        let json = "{\"id\":\"a/b\",\"family\":\"a\",\"futureKnob\":1,\"x\\u001b[2J\":2}";
        let user = build(&[src(Layer::User, "u.json", json)]);
        let shown = user.problems[0].to_string();
        assert!(
            shown.contains("2 keys this tj does not know (futureKnob, x\\u{1b}[2J)"),
            "{shown}"
        );
        let project = build(&[src(Layer::Project, "p.json", json)]);
        let shown = project.problems[0].to_string();
        assert!(shown.contains("2 keys this tj does not know (2 at the top level)"), "{shown}");
    }
}
