//! Choosing one rule for a command. Pure: a function of the rule set, the command and (for
//! `match.outputRegex` only) the output.
//!
//! The score is tokenjuice's, so a tokenjuice rule set picks the same rule here:
//! `priority × 1000 + 100 per argv0 + 60 per git subcommand + 40 per argvIncludes word +
//! 35 per argvIncludesAny word + 25 per commandIncludes + 20 per commandIncludesAny + 10 per
//! tool name`, plus tj's extensions (`subcommands` 60, `commandRegex` 30, `outputRegex` 20,
//! `exitCodes` 5).
//! Ties go to the later layer (project over user over builtin), then to the smaller id.

use super::compiled::{Budget, Compiler};
use super::identity::{self, Parsed};
use super::{FALLBACK_ID, Layer, LoadedRule, RuleSet};

/// The tool name assumed when the caller gives none (tokenjuice's own wrapper uses it, and
/// its rules name it in `toolNames`).
pub const DEFAULT_TOOL_NAME: &str = "exec";

/// What selection looks at.
#[derive(Clone, Copy, Debug, Default)]
pub struct Query<'a> {
    /// The argv as run, if known (preferred over `command`).
    pub argv: &'a [String],
    /// The command as a shell string, if known.
    pub command: Option<&'a str>,
    /// The harness's tool name.
    pub tool_name: Option<&'a str>,
    /// The exit code.
    pub exit_code: Option<i64>,
}

/// The command as rules see it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    /// The real program and its arguments, wrappers stripped.
    pub argv: Vec<String>,
    /// `argv` joined with spaces, for `commandIncludes` and `commandRegex`.
    pub command: String,
    /// The command was compound (pipes, `&&`, …) or unparsable: only the fallback applies.
    pub compound: bool,
}

/// Works out the identity of the command in `query`.
pub fn identify(query: &Query<'_>) -> Identity {
    let words: Vec<String> = if !query.argv.is_empty() {
        query.argv.to_vec()
    } else if let Some(command) = query.command {
        match identity::tokenize(command) {
            Parsed::Simple(words) => words,
            Parsed::Empty => Vec::new(),
            Parsed::Compound | Parsed::Malformed => {
                return Identity { argv: Vec::new(), command: command.to_owned(), compound: true };
            }
        }
    } else {
        Vec::new()
    };
    let argv = identity::normalize(&words);
    // A shell wrapper whose body is compound (`bash -c "a && b"`) normalizes to itself.
    let compound = is_shell_with_body(&argv);
    let command = argv.join(" ");
    Identity { argv, command, compound }
}

fn is_shell_with_body(argv: &[String]) -> bool {
    let Some(first) = argv.first() else { return false };
    matches!(first.as_str(), "sh" | "bash" | "zsh" | "dash" | "ksh")
        && argv
            .iter()
            .skip(1)
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
}

/// The outcome of selection.
#[derive(Debug)]
pub struct Selection<'r> {
    /// The chosen rule.
    pub rule: &'r LoadedRule,
    /// The command as the rule saw it.
    pub identity: Identity,
    /// The chosen rule's score (0 for the fallback).
    pub score: i64,
    /// Every other rule that matched, best first, with its score (for `tj rules explain`).
    pub runners_up: Vec<(&'r LoadedRule, i64)>,
}

impl Selection<'_> {
    /// Returns true if and only if no specific rule matched.
    pub fn is_fallback(&self) -> bool {
        self.rule.rule.id == FALLBACK_ID
    }
}

/// Picks the best-scoring matching rule, or the fallback.
///
/// `lines` is the rendered output, needed only by rules with `match.outputRegex`; pass `None`
/// to select by command alone (such rules then never match).
pub fn select<'r>(set: &'r RuleSet, query: &Query<'_>, lines: Option<&[&str]>) -> Selection<'r> {
    select_within(set, query, lines, &Budget::unlimited())
}

/// [`select`], with the regex constraints of user and project rules compiled and matched
/// under `budget` (see `compiled`). When the budget runs out, the rule being matched is
/// blamed ([`Budget::blame`]) and no further rule is tried; the caller checks the budget.
pub fn select_within<'r>(
    set: &'r RuleSet,
    query: &Query<'_>,
    lines: Option<&[&str]>,
    budget: &Budget,
) -> Selection<'r> {
    let identity = identify(query);
    let fallback = set.fallback();
    if identity.compound || identity.argv.is_empty() {
        return Selection { rule: fallback, identity, score: 0, runners_up: Vec::new() };
    }
    let tool = query.tool_name.unwrap_or(DEFAULT_TOOL_NAME);
    let git_sub = identity::git_subcommand(&identity.argv);
    let facts = Facts { identity: &identity, git_sub, tool, exit_code: query.exit_code, lines };
    let mut matched: Vec<(&LoadedRule, i64)> = Vec::new();
    for rule in set.rules().iter().filter(|r| r.rule.id != FALLBACK_ID) {
        if budget.exhausted().is_some() {
            break;
        }
        if matches(rule, &facts, budget) {
            matched.push((rule, score(rule)));
        }
        if budget.exhausted().is_some() {
            budget.blame(&rule.rule.id);
        }
    }
    matched.sort_by(|(a, sa), (b, sb)| {
        sb.cmp(sa).then_with(|| b.layer.cmp(&a.layer)).then_with(|| a.rule.id.cmp(&b.rule.id))
    });
    if matched.is_empty() {
        return Selection { rule: fallback, identity, score: 0, runners_up: Vec::new() };
    }
    let (rule, score) = matched.remove(0);
    Selection { rule, identity, score, runners_up: matched }
}

/// The specificity score of a rule (see the module doc).
pub fn score(rule: &LoadedRule) -> i64 {
    let m = &rule.rule.matcher;
    let len = |v: &Option<Vec<String>>| v.as_ref().map_or(0, Vec::len) as i64;
    let words = |v: &Option<Vec<Vec<String>>>| {
        v.as_ref().map_or(0, |g| g.iter().map(Vec::len).sum::<usize>()) as i64
    };
    rule.rule.priority.saturating_mul(1000)
        + len(&m.argv0) * 100
        + len(&m.git_subcommands) * 60
        + i64::from(m.subcommands.is_some()) * 60
        + words(&m.argv_includes) * 40
        + words(&m.argv_includes_any) * 35
        + len(&m.command_includes) * 25
        + len(&m.command_includes_any) * 20
        + len(&m.tool_names) * 10
        + i64::from(m.command_regex.is_some()) * 30
        + i64::from(m.output_regex.is_some()) * 20
        + i64::from(m.exit_codes.is_some()) * 5
}

/// What a rule's match constraints are checked against.
struct Facts<'a> {
    identity: &'a Identity,
    git_sub: Option<&'a str>,
    tool: &'a str,
    exit_code: Option<i64>,
    lines: Option<&'a [&'a str]>,
}

fn matches(rule: &LoadedRule, facts: &Facts<'_>, budget: &Budget) -> bool {
    let m = &rule.rule.matcher;
    let id = facts.identity;
    let argv = &id.argv;
    let has = |word: &String| argv.iter().any(|a| a == word);
    if let Some(names) = &m.tool_names
        && !names.iter().any(|n| n == facts.tool)
    {
        return false;
    }
    if let Some(argv0) = &m.argv0
        && !argv0.iter().any(|a| Some(a) == argv.first())
    {
        return false;
    }
    if let Some(subs) = &m.git_subcommands
        && !facts.git_sub.is_some_and(|g| subs.iter().any(|s| s == g))
    {
        return false;
    }
    if let Some(subs) = &m.subcommands
        && !subs.iter().any(|s| has_subcommand(argv, s))
    {
        return false;
    }
    if let Some(groups) = &m.argv_includes
        && !groups.iter().all(|g| g.iter().all(has))
    {
        return false;
    }
    if let Some(groups) = &m.argv_includes_any
        && !groups.iter().any(|g| g.iter().all(has))
    {
        return false;
    }
    if let Some(parts) = &m.command_includes
        && !parts.iter().all(|p| includes_at_word_boundary(&id.command, p))
    {
        return false;
    }
    if let Some(parts) = &m.command_includes_any
        && !parts.iter().any(|p| includes_at_word_boundary(&id.command, p))
    {
        return false;
    }
    if let Some(codes) = &m.exit_codes
        && !facts.exit_code.is_some_and(|c| codes.contains(&c))
    {
        return false;
    }
    // The regex constraints come last: they are the only ones that compile anything.
    matches_regexes(rule, facts, budget)
}

/// `match.commandRegex` and `match.outputRegex`. A user or project rule's are compiled by
/// a bounded [`Compiler`] and matched under `budget`, metered, checked after every line.
fn matches_regexes(rule: &LoadedRule, facts: &Facts<'_>, budget: &Budget) -> bool {
    let m = &rule.rule.matcher;
    if m.command_regex.is_none() && m.output_regex.is_none() {
        return true;
    }
    let untrusted = rule.layer != Layer::Builtin;
    let _meter = untrusted.then(|| budget.meter());
    let compiler = Compiler::for_layer(rule.layer, budget);
    if let Some(re) = &m.command_regex
        && !compiler
            .one_shot(re, None)
            .is_ok_and(|p| p.is_match_within(&facts.identity.command, budget))
    {
        return false;
    }
    if let Some(re) = &m.output_regex {
        let Some(lines) = facts.lines else { return false };
        let Ok(p) = compiler.pattern(re, None) else { return false };
        for line in lines {
            if p.is_match_within(line, budget) {
                return true;
            }
            if untrusted && !budget.check() {
                return false;
            }
        }
        return false;
    }
    true
}

/// Returns true if and only if the words after `argv[0]` that are not options start with the
/// words of `sub` (`""`: there are none), reading the word after an option either as a word
/// or as the option's value.
pub fn has_subcommand(argv: &[String], sub: &str) -> bool {
    let mut words = argv.iter().skip(1).filter(|a| !a.starts_with('-') && !a.starts_with('+'));
    if sub.is_empty() {
        return words.next().is_none();
    }
    if sub.split(' ').all(|want| words.next().is_some_and(|w| w == want)) {
        return true;
    }
    // Global options may take a value before the subcommand: `kubectl -n prod get`,
    // `pnpm --filter web build`, `docker compose -f ci.yml up`, `mvn -pl core install`.
    // Read again, taking the word after each option without `=` as its value.
    let mut args = argv.iter().skip(1);
    let mut words = std::iter::from_fn(move || {
        while let Some(arg) = args.next() {
            if arg.starts_with('-') && arg.len() > 1 {
                if !arg.contains('=') {
                    args.next();
                }
            } else if !arg.starts_with('+') {
                return Some(arg.as_str());
            }
        }
        None
    });
    sub.split(' ').all(|want| words.next().is_some_and(|w| w == want))
}

/// Returns true if and only if `part` occurs in `command` without a word character
/// (`[A-Za-z0-9_]`) glued to either end of it where `part` itself starts or ends with one
/// (tokenjuice's `commandIncludes` semantics: `test` matches `cargo test -q`, not `cargo
/// testing`).
pub fn includes_at_word_boundary(command: &str, part: &str) -> bool {
    if part.is_empty() {
        return true;
    }
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let starts_word = is_word(part.chars().next());
    let ends_word = is_word(part.chars().next_back());
    let mut from = 0;
    while let Some(pos) = command[from..].find(part) {
        let start = from + pos;
        let end = start + part.len();
        let before = command[..start].chars().next_back();
        let after = command[end..].chars().next();
        if (!starts_word || !is_word(before)) && (!ends_word || !is_word(after)) {
            return true;
        }
        from = start + command[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::rules::Layer;

    fn set(rules: &[&str]) -> RuleSet {
        RuleSet::from_sources(
            rules.iter().map(|r| (Layer::Builtin, PathBuf::from("t.json"), *r)),
            true,
        )
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    const CARGO: &str = r#"{"id":"build/cargo","family":"build","match":{"argv0":["cargo"]}}"#;
    const CARGO_TEST: &str = r#"{"id":"tests/cargo-test","family":"tests","match":{"argv0":["cargo"],"argvIncludes":[["test"]]}}"#;

    #[test]
    fn every_builtin_command_regex_matches_alike_without_a_dense_dfa() {
        // `matches_regexes` asks `one_shot` patterns; they must say what the full ones say.
        let commands = [
            "cargo test",
            "cargo fmt --check",
            "cargo +nightly fmt",
            "rustfmt src/main.rs",
            "tar -tzf x.tar.gz",
            "tar xOf a.tar f",
            "gradle build",
            "./gradlew :app:assembleDebug --info",
            "docker compose logs -f web",
            "docker-compose --project-name x ps",
            "docker compose up -d",
            "kubectl get pods -o yaml",
            "kubectl -n prod apply -f k.yaml",
            "kubectl rollout status deploy/x",
            "oc describe pod x",
            "cargo --help",
            "git commit -h",
            "npm help install",
            "python manage.py test app",
            "npm test",
            "yarn run test:unit",
            "pnpm vitest",
            "karma start",
            "ng test",
            "rails test:models",
            "ruby -Itest test/x_test.rb",
            "make check",
            "bun run test",
            "ls -la",
            "",
        ];
        let compiler = Compiler::builtin();
        let set = RuleSet::builtin();
        let mut checked = 0;
        for rule in &set.rules {
            let Some(re) = &rule.rule.matcher.command_regex else { continue };
            let full = compiler.pattern(re, None).unwrap();
            let light = compiler.one_shot(re, None).unwrap();
            for command in commands {
                assert_eq!(
                    light.is_match(command),
                    full.is_match(command),
                    "{}: {re:?} on {command:?}",
                    rule.rule.id
                );
            }
            checked += 1;
        }
        assert!(checked >= 20, "only {checked} builtin rules have a commandRegex");
    }

    #[test]
    fn more_specific_rule_wins() {
        let rules = set(&[CARGO, CARGO_TEST]);
        let a = argv(&["cargo", "test", "--lib"]);
        let sel = select(&rules, &Query { argv: &a, ..Query::default() }, None);
        assert_eq!(sel.rule.rule.id, "tests/cargo-test");
        assert_eq!(sel.runners_up.len(), 1);
    }

    #[test]
    fn wrappers_are_stripped_before_matching() {
        let rules = set(&[CARGO_TEST]);
        let q =
            Query { command: Some("env RUST_LOG=debug /usr/bin/cargo test"), ..Query::default() };
        assert_eq!(select(&rules, &q, None).rule.rule.id, "tests/cargo-test");
    }

    #[test]
    fn compound_commands_get_the_fallback() {
        let rules = set(&[CARGO_TEST]);
        let q = Query { command: Some("cargo test | tail -5"), ..Query::default() };
        let sel = select(&rules, &q, None);
        assert!(sel.is_fallback());
        assert!(sel.identity.compound);
    }

    #[test]
    fn tool_names_default_to_exec() {
        let rules =
            set(&[r#"{"id":"a/x","family":"a","match":{"toolNames":["exec"],"argv0":["x"]}}"#]);
        let a = argv(&["x"]);
        assert_eq!(
            select(&rules, &Query { argv: &a, ..Query::default() }, None).rule.rule.id,
            "a/x"
        );
        let q = Query { argv: &a, tool_name: Some("Bash"), ..Query::default() };
        assert!(select(&rules, &q, None).is_fallback());
    }

    #[test]
    fn exit_codes_and_output_regex_constrain() {
        let rules = set(&[
            r#"{"id":"a/fail","family":"a","match":{"argv0":["x"],"exitCodes":[1],"outputRegex":"^boom"}}"#,
        ]);
        let a = argv(&["x"]);
        let q = Query { argv: &a, exit_code: Some(1), ..Query::default() };
        assert_eq!(select(&rules, &q, Some(&["ok", "boom!"])).rule.rule.id, "a/fail");
        assert!(select(&rules, &q, Some(&["ok"])).is_fallback());
        assert!(select(&rules, &Query { exit_code: Some(0), ..q }, Some(&["boom"])).is_fallback());
    }

    #[test]
    fn tie_goes_to_later_layer_then_smaller_id() {
        let rules = RuleSet::from_sources(
            [
                (
                    Layer::Builtin,
                    PathBuf::from("b"),
                    r#"{"id":"a/b","family":"a","match":{"argv0":["x"]}}"#,
                ),
                (
                    Layer::Project,
                    PathBuf::from("p"),
                    r#"{"id":"a/c","family":"a","match":{"argv0":["x"]}}"#,
                ),
            ],
            true,
        );
        let a = argv(&["x"]);
        assert_eq!(
            select(&rules, &Query { argv: &a, ..Query::default() }, None).rule.rule.id,
            "a/c"
        );
    }

    #[test]
    fn subcommands_skip_options_and_toolchains() {
        let a = |w: &[&str]| argv(w);
        assert!(has_subcommand(&a(&["cargo", "+nightly", "--locked", "test", "x"]), "test"));
        assert!(!has_subcommand(&a(&["cargo", "build", "--bin", "test"]), "test"));
        assert!(has_subcommand(&a(&["uv", "pip", "install", "x"]), "pip install"));
        assert!(!has_subcommand(&a(&["uv", "pip", "list"]), "pip install"));
        assert!(has_subcommand(&a(&["pnpm", "--frozen-lockfile"]), ""));
        // Options with values before the subcommand.
        assert!(has_subcommand(&a(&["kubectl", "-n", "prod", "get", "pods"]), "get"));
        assert!(has_subcommand(&a(&["pnpm", "--filter", "web", "build"]), "build"));
        assert!(has_subcommand(&a(&["docker", "compose", "-f", "ci.yml", "up"]), "compose up"));
        assert!(has_subcommand(&a(&["mvn", "-pl", "core", "install"]), "install"));
        assert!(!has_subcommand(&a(&["pnpm", "--filter", "web", "test"]), "build"));
        assert!(!has_subcommand(&a(&["pnpm", "test"]), ""));
    }

    #[test]
    fn command_includes_respects_word_boundaries() {
        assert!(includes_at_word_boundary("cargo test -q", "test"));
        assert!(!includes_at_word_boundary("cargo testing", "test"));
        assert!(includes_at_word_boundary("npm run --silent", "--silent"));
        assert!(includes_at_word_boundary("a.b", ".b"));
        assert!(!includes_at_word_boundary("mytest", "test"));
    }
}
