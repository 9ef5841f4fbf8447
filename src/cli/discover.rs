//! `tj discover`: the commands that cost the most context without going through tj.
//!
//! Three kinds of finding, each grouped by command (the program, and its subcommand for
//! programs that have them: `cargo test`, `git diff`, `npm run build`) and ranked by the
//! estimated tokens the agent read:
//!
//! - a shell call in the harnesses' transcripts that did not go through tj (see
//!   `transcripts` for how that is told), costing its whole output;
//! - a run in tj's ledger that fell to `generic/fallback`, costing what the agent was
//!   given;
//! - a run whose rule saved less than [`LITTLE`] of the output, costing the same.
//!
//! Ledger runs whose output was under [`MIN_TOKENS`] are left out: the gate adopts no
//! reduction that saves less than 500 bytes, so there was nothing to save. Each finding
//! says what would catch it, from rule selection on its command (the merged rule set, as
//! `tj rules explain`), the hook's own rewrite decision (`rewrite`), and the shell hook's
//! command list.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use serde_json::{Value, json};

use super::stats::{Format, Since, parse_since};
use super::stats_transcripts::{csv_field, roots_phrase};
use crate::emit;
use crate::env::Env;
use crate::exit::Status;
use crate::rules::select::{Query, select};
use crate::transcripts::{self, Harness};

/// The commands that cost the agent the most context without tj, and what would catch them
///
/// Reads the harnesses' session logs (Claude Code, Codex) and tj's ledger. Ranks the
/// commands whose output reached the agent without going through tj, fell to the generic
/// fallback rule, or was reduced by less than 20 %, by their estimated tokens; each with the
/// rule, hook or setting that would catch it.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only what happened since WHEN: a date (2026-11-30), or an age (90m, 12h, 7d, 2w)
    #[arg(long, value_name = "WHEN", value_parser = parse_since)]
    since: Option<Since>,

    /// Read transcripts under DIR instead of the harnesses' own directories (repeatable)
    #[arg(long, value_name = "DIR")]
    transcripts_dir: Vec<PathBuf>,

    /// How many commands to show
    #[arg(long, value_name = "N", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..))]
    limit: u64,

    /// How to print: text, json or csv
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// A rule that saves less than this share of an output (by estimated tokens) saved little.
pub(crate) const LITTLE: f64 = 0.20;

/// Ledger runs with fewer original tokens than this are not findings (about 570
/// characters: below what the gate needs to adopt any reduction).
pub(crate) const MIN_TOKENS: u64 = 150;

/// Why a command is a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Reason {
    /// Its output reached the agent without tj.
    NotThroughTj,
    /// tj ran it and selected the fallback rule.
    Fallback,
    /// tj ran it and its rule saved less than [`LITTLE`].
    LittleSaved,
}

impl Reason {
    fn name(self) -> &'static str {
        match self {
            Reason::NotThroughTj => "not-through-tj",
            Reason::Fallback => "fallback",
            Reason::LittleSaved => "little-saved",
        }
    }
}

/// The findings of one command and reason, added up.
#[derive(Debug, Default)]
struct Group {
    runs: usize,
    tokens: u64,
    raw_tokens: u64,
    harnesses: BTreeSet<Harness>,
    /// Each command line seen, and how often.
    commands: HashMap<String, usize>,
}

impl Group {
    /// The command line seen most often (the smallest of equals).
    fn example(&self) -> &str {
        self.commands
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map_or("", |(c, _)| c.as_str())
    }

    /// The share of the original tokens the runs saved.
    fn saved(&self) -> Option<f64> {
        // Lossy: token counts far below 2^52 convert exactly.
        #[allow(clippy::cast_precision_loss)]
        (self.raw_tokens > 0).then(|| 1.0 - self.tokens as f64 / self.raw_tokens as f64)
    }
}

/// A ranked finding, with what would catch it.
struct Finding<'g> {
    key: &'g str,
    reason: Reason,
    group: &'g Group,
    rule: Option<String>,
    catch: String,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let read = super::stats_transcripts::read(&args.transcripts_dir, env);
    let groups = collect(&read.scan.sessions, &read.runs, args.since);
    let mut ranked: Vec<(&(String, Reason), &Group)> = groups.iter().collect();
    ranked.sort_by(|(ka, a), (kb, b)| {
        b.tokens.cmp(&a.tokens).then_with(|| b.runs.cmp(&a.runs)).then_with(|| ka.cmp(kb))
    });
    ranked.truncate(usize::try_from(args.limit).unwrap_or(usize::MAX));
    let catcher = Catcher::new(env);
    let findings: Vec<Finding<'_>> = ranked
        .into_iter()
        .map(|((key, reason), group)| {
            let (rule, catch) = catcher.catch(key, *reason, group);
            Finding { key, reason: *reason, group, rule, catch }
        })
        .collect();
    match args.format {
        Format::Text => emit::stdout(&text(&findings, &read))?,
        Format::Json => emit::json(&json_doc(&findings, &read))?,
        Format::Csv => emit::stdout(&csv(&findings))?,
    }
    Ok(Status::Ok)
}

/// Groups every finding by command key and reason.
fn collect(
    sessions: &[transcripts::Session],
    runs: &[transcripts::ledger::Run],
    since: Option<Since>,
) -> BTreeMap<(String, Reason), Group> {
    let after = |secs: Option<u64>| since.is_none_or(|Since(t)| secs.is_some_and(|s| s >= t));
    let mut groups: BTreeMap<(String, Reason), Group> = BTreeMap::new();
    let mut add = |command: &str, reason, harness: Option<Harness>, tokens: u64, raw: u64| {
        let group = groups.entry((command_key(command), reason)).or_default();
        group.runs += 1;
        group.tokens += tokens;
        group.raw_tokens += raw;
        group.harnesses.extend(harness);
        *group.commands.entry(command.to_owned()).or_default() += 1;
    };
    for session in sessions {
        for call in
            session.shell.iter().filter(|c| !c.via.is_tj() && after(c.time.map(|t| t / 1000)))
        {
            let tokens = call.tokens as u64;
            add(&call.command, Reason::NotThroughTj, Some(session.harness), tokens, tokens);
        }
    }
    for run in runs.iter().filter(|r| r.raw_tokens >= MIN_TOKENS && after(Some(r.time))) {
        // Lossy: token counts far below 2^52 convert exactly.
        #[allow(clippy::cast_precision_loss)]
        let saved = 1.0 - run.tokens as f64 / run.raw_tokens as f64;
        let reason = if run.rule == crate::rules::FALLBACK_ID {
            Reason::Fallback
        } else if saved < LITTLE {
            Reason::LittleSaved
        } else {
            continue;
        };
        add(&run.command, reason, None, run.tokens, run.raw_tokens);
    }
    groups
}

/// Programs whose first plain argument is a subcommand (or, for `make` and `just`, a
/// target), which tells their commands apart.
const WITH_SUBCOMMANDS: &[&str] = &[
    "apt",
    "apt-get",
    "aws",
    "az",
    "bazel",
    "brew",
    "bun",
    "bundle",
    "cargo",
    "cmake",
    "composer",
    "conda",
    "dart",
    "deno",
    "docker",
    "dotnet",
    "flutter",
    "gcloud",
    "gh",
    "git",
    "go",
    "gradle",
    "gradlew",
    "helm",
    "just",
    "kubectl",
    "make",
    "mix",
    "mvn",
    "npm",
    "nx",
    "pip",
    "pip3",
    "pnpm",
    "podman",
    "poetry",
    "rails",
    "rustup",
    "swift",
    "terraform",
    "turbo",
    "uv",
    "yarn",
];

/// Package managers whose `run SCRIPT` names the script that runs.
const SCRIPT_RUNNERS: &[&str] = &["npm", "pnpm", "yarn", "bun"];

/// Commands that only set up the one that follows them in a line.
const PRELUDES: &[&str] = &["cd", "pushd", "popd", "export", "source", ".", "set", "true", ":"];

/// What findings are grouped by: the main program of `line` (the first simple command that
/// is not a prelude such as `cd`, wrappers stripped, without its directory), and its
/// subcommand for programs that have them.
fn command_key(line: &str) -> String {
    let commands = transcripts::simple_commands(line);
    let identities: Vec<Vec<String>> =
        commands.iter().map(|argv| crate::rules::identity::normalize(argv)).collect();
    let main = identities
        .iter()
        .find(|argv| argv.first().is_some_and(|p| !PRELUDES.contains(&p.as_str())))
        .or(identities.first());
    let Some(argv) = main.filter(|a| !a.is_empty()) else { return line.trim().to_owned() };
    let mut key = vec![argv[0].as_str()];
    if WITH_SUBCOMMANDS.contains(&key[0]) {
        let plain = |w: &&String| {
            w.len() <= 24
                && w.starts_with(|c: char| c.is_ascii_lowercase())
                && w.bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b":_-".contains(&c))
        };
        let mut args = argv[1..].iter().filter(|w| !w.starts_with('-'));
        if let Some(sub) = args.next().filter(plain) {
            key.push(sub);
            if sub == "run" && SCRIPT_RUNNERS.contains(&key[0]) {
                key.extend(args.next().filter(plain).map(String::as_str));
            }
        }
    }
    key.join(" ")
}

/// What the suggestions are worked out from, loaded once.
struct Catcher<'e> {
    env: &'e Env,
    rules: crate::rules::RuleSet,
    config: crate::config::Config,
    user_rules: String,
    tj: PathBuf,
}

impl<'e> Catcher<'e> {
    fn new(env: &'e Env) -> Catcher<'e> {
        let dirs = crate::rules::load::Dirs::find(env);
        let user_rules = dirs.user.map_or_else(
            || "your rules directory (set TJ_CONFIG_DIR)".to_owned(),
            |d| format!("`{}`", d.display()),
        );
        Catcher {
            env,
            rules: super::load_rules(env),
            config: super::load_config(env),
            user_rules,
            tj: crate::rewrite::this_tj().unwrap_or_else(|_| PathBuf::from("/usr/local/bin/tj")),
        }
    }

    /// The rule a command would get now, if not the fallback.
    fn rule_for(&self, argv: &[String]) -> Option<String> {
        let selection = select(&self.rules, &Query { argv, ..Query::default() }, None);
        (!selection.is_fallback()).then(|| selection.rule.rule.id.clone())
    }

    /// The rule the group's commands get, and what would catch them.
    fn catch(&self, key: &str, reason: Reason, group: &Group) -> (Option<String>, String) {
        let example = group.example();
        let commands = transcripts::simple_commands(example);
        let main = commands
            .iter()
            .find(|argv| {
                crate::rules::identity::normalize(argv)
                    .first()
                    .is_some_and(|p| !PRELUDES.contains(&p.as_str()))
            })
            .or(commands.first())
            .cloned()
            .unwrap_or_default();
        let rule = self.rule_for(&main);
        let explain = format!("`tj rules explain -- {key}`");
        let catch = match (reason, &rule) {
            (_, None) => format!("no rule; write one in {} (see {explain})", self.user_rules),
            (Reason::NotThroughTj, Some(rule)) => self.route(rule, example, &main, group),
            (Reason::Fallback, Some(rule)) => {
                format!("rule {rule} handles it now; these runs predate it")
            }
            (Reason::LittleSaved, Some(rule)) => format!(
                "rule {rule} saved {} of it: override the rule with one of the same id in {} (see {explain})",
                group.saved().map_or_else(|| "little".to_owned(), |s| format!("{:.0}%", s * 100.0)),
                self.user_rules
            ),
        };
        (rule, catch)
    }

    /// What would route a command that a rule handles through tj.
    fn route(&self, rule: &str, example: &str, main: &[String], group: &Group) -> String {
        let harness = group.harnesses.iter().next().copied().unwrap_or(Harness::ClaudeCode);
        let ctx = crate::rewrite::Context {
            env: self.env,
            tj: &self.tj,
            host: Some(harness.host()),
            exclude: &self.config.rewrite_exclude,
        };
        let program =
            crate::rules::identity::normalize(main).into_iter().next().unwrap_or_default();
        let wrapped = match &self.config.shell_commands {
            Some(list) => list.contains(&program),
            None => crate::shell::DEFAULT_COMMANDS.contains(&program.as_str()),
        };
        let shell = if wrapped {
            format!(
                "or source the shell hook in the agent's shell (it wraps `{program}`; `tj doctor` checks)"
            )
        } else {
            format!(
                "or add `{program}` to the shell hook's commands (`shellCommands` in config.json, or `tj init bash --commands …`)"
            )
        };
        match crate::rewrite::rewrite(example, &ctx) {
            Ok(_) => {
                let installs: Vec<String> =
                    group.harnesses.iter().map(|h| format!("`tj install {}`", h.name())).collect();
                format!(
                    "rule {rule} handles it; it did not go through tj: install the hook ({}), {shell}",
                    installs.join(", ")
                )
            }
            Err(why) => format!(
                "rule {rule} handles it, but the hook leaves this line alone ({why}): run it as `tj run -- {}`",
                main.join(" ")
            ),
        }
    }
}

/// An example command as shown: secrets redacted, cut at 160 characters.
fn shown(command: &str) -> String {
    let redacted = crate::redact::redact(command);
    let mut text: String = redacted.chars().take(160).collect();
    if redacted.chars().nth(160).is_some() {
        text.push('…');
    }
    text
}

fn text(findings: &[Finding<'_>], read: &super::stats_transcripts::Read) -> String {
    if findings.is_empty() {
        return if read.scan.sessions.is_empty() && read.runs.is_empty() {
            format!(
                "no transcripts found in {}, and tj's ledger is empty",
                roots_phrase(&read.roots)
            )
        } else {
            "nothing found: every shell call in the transcripts went through tj, and no run in the ledger fell to generic/fallback or saved less than 20%".to_owned()
        };
    }
    let mut out = String::from(
        "The commands that cost the agent the most context without tj (estimated tokens):\n",
    );
    for (rank, f) in findings.iter().enumerate() {
        let g = f.group;
        let what = match f.reason {
            Reason::NotThroughTj => {
                let names: Vec<&str> = g.harnesses.iter().map(|h| h.name()).collect();
                format!("not through tj ({})", names.join(", "))
            }
            Reason::Fallback => "fell to generic/fallback".to_owned(),
            Reason::LittleSaved => "saved little".to_owned(),
        };
        let _ = write!(
            out,
            "\n{:>2}. {} — {} tokens in {} {}, {what}\n    e.g. {}\n    → {}\n",
            rank + 1,
            crate::diag::escape(f.key),
            crate::reduce::group(usize::try_from(g.tokens).unwrap_or(usize::MAX)),
            g.runs,
            if g.runs == 1 { "run" } else { "runs" },
            crate::diag::escape(&shown(g.example())),
            crate::diag::escape(&f.catch),
        );
    }
    out
}

fn json_doc(findings: &[Finding<'_>], read: &super::stats_transcripts::Read) -> Value {
    let rows: Vec<Value> = findings
        .iter()
        .enumerate()
        .map(|(rank, f)| {
            json!({
                "rank": rank + 1,
                "command": f.key,
                "reason": f.reason.name(),
                "runs": f.group.runs,
                "tokens": f.group.tokens,
                "harnesses": f.group.harnesses.iter().map(|h| h.name()).collect::<Vec<_>>(),
                "example": crate::redact::redact(f.group.example()),
                "rule": f.rule,
                "suggestion": f.catch,
            })
        })
        .collect();
    json!({
        "commands": rows,
        "read": {
            "directories": read.roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>(),
            "files": read.scan.files,
            "sessions": read.scan.sessions.len(),
            "ledgerRuns": read.runs.len(),
        },
    })
}

fn csv(findings: &[Finding<'_>]) -> String {
    let mut out =
        String::from("rank,command,reason,runs,tokens,harnesses,rule,example,suggestion\n");
    for (rank, f) in findings.iter().enumerate() {
        let names: Vec<&str> = f.group.harnesses.iter().map(|h| h.name()).collect();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            rank + 1,
            csv_field(f.key),
            f.reason.name(),
            f.group.runs,
            f.group.tokens,
            csv_field(&names.join(" ")),
            csv_field(f.rule.as_deref().unwrap_or_default()),
            csv_field(&crate::redact::redact(f.group.example())),
            csv_field(&f.catch),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_group_by_program_and_subcommand() {
        for (line, key) in [
            ("cargo test --lib parser", "cargo test"),
            ("cd /x && RUST_LOG=1 cargo test 2>&1 | tail -40", "cargo test"),
            ("timeout 60 /usr/bin/cargo +nightly build --release", "cargo build"),
            ("git -C repo diff --stat", "git diff"),
            ("npm run build -- --watch", "npm run build"),
            ("rg -n 'fn main' src", "rg"),
            ("ls -la", "ls"),
            ("cat $(find . -name x)", "cat"),
            ("make", "make"),
            ("go test ./...", "go test"),
            ("python -m pytest -q", "pytest"),
        ] {
            assert_eq!(command_key(line), key, "{line}");
        }
    }

    #[test]
    fn the_example_is_the_most_frequent_command_then_the_smallest() {
        let mut g = Group::default();
        g.commands.insert("b".into(), 2);
        g.commands.insert("a".into(), 2);
        g.commands.insert("c".into(), 1);
        assert_eq!(g.example(), "a");
    }
}
