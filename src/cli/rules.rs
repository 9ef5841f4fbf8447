//! `tj rules list | verify | explain`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;

use crate::emit;
use crate::env::Env;
use crate::exit::Status;
use crate::rules::load::{self, Dirs};
use crate::rules::select::{self, Query};
use crate::rules::{printable, printable_path};
use crate::verify;

/// Inspect and check the rule set
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// One line per rule of the merged set: id, family, layer, file
    List,
    /// Check every rule (and with --fixtures, every fixture); exits 1 on any problem
    Verify(VerifyArgs),
    /// Which rule a command selects, and why
    Explain(ExplainArgs),
    Replay(super::replay::Args),
}

#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArgs {
    /// Also reduce every fixture under DIR and check must_keep, must_drop, determinism,
    /// provenance, and that every builtin rule has a fixture
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "tests/fixtures")]
    fixtures: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ExplainArgs {
    /// The command as a shell string (instead of ARGV)
    #[arg(long, value_name = "CMD", conflicts_with = "argv")]
    command: Option<String>,

    /// The command, exactly as it would be run
    #[arg(last = true, value_name = "ARGV")]
    argv: Vec<String>,
}

pub(crate) fn run(cmd: Command, env: &Env) -> Result<Status> {
    match cmd {
        Command::List => list(env),
        Command::Verify(args) => verify(&args, env),
        Command::Explain(args) => explain(&args, env),
        Command::Replay(args) => super::replay::run(&args, env),
    }
}

fn list(env: &Env) -> Result<Status> {
    let set = super::load_rules(env);
    // Ids, families and paths of user and project rules come from files nobody vetted.
    let shown: Vec<_> = set
        .rules()
        .iter()
        .map(|r| (printable(&r.rule.id), printable(&r.rule.family), printable_path(&r.path)))
        .collect();
    let width = shown.iter().map(|(id, ..)| id.chars().count()).max().unwrap_or(0);
    let fwidth = shown.iter().map(|(_, family, _)| family.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (r, (id, family, path)) in set.rules().iter().zip(&shown) {
        let _ = writeln!(out, "{id:width$}  {family:fwidth$}  {:7}  {path}", r.layer.as_str());
    }
    emit::stdout(out.trim_end())?;
    Ok(Status::Ok)
}

fn verify(args: &VerifyArgs, env: &Env) -> Result<Status> {
    let set = load::load(env);
    let mut problems = verify::check_rules(&set);
    let mut summary = format!("{} rules", set.rules().len());
    let mut table = String::new();
    if let Some(dir) = &args.fixtures {
        let cases = verify::read_fixtures(dir, &mut problems)?;
        let mut reduced = 0;
        // Per family: fixtures, reduced, tokens before and after.
        let mut families: BTreeMap<&str, (usize, usize, usize, usize)> = BTreeMap::new();
        for case in &cases {
            let report = verify::check_fixture(&set, case);
            reduced += usize::from(report.reduced);
            let family = families.entry(case.family.as_str()).or_default();
            family.0 += 1;
            family.1 += usize::from(report.reduced);
            family.2 += report.tokens.0;
            family.3 += report.tokens.1;
            problems.extend(report.problems);
        }
        table = family_table(&families);
        for id in verify::uncovered_rules(&set, &cases) {
            problems.push(format!("rule `{id}` has no fixture that selects it"));
        }
        let _ = write!(summary, ", {} fixtures ({reduced} reduced)", cases.len());
    }
    let mut out = table;
    for p in &problems {
        let _ = writeln!(out, "{p}");
    }
    let verdict = if problems.is_empty() { "ok" } else { "FAILED" };
    let _ = write!(out, "{verdict}: {summary}, {} problems", problems.len());
    emit::stdout(&out)?;
    Ok(if problems.is_empty() { Status::Ok } else { Status::Failure })
}

/// The per-family savings over the fixtures: what `verify --fixtures` reports before its
/// verdict, so a rule change shows its cost or gain at once.
fn family_table(families: &BTreeMap<&str, (usize, usize, usize, usize)>) -> String {
    let mut out = format!(
        "{:14} {:>8} {:>8} {:>12} {:>12} {:>6}\n",
        "family", "fixtures", "reduced", "tokens", "after", "ratio"
    );
    let mut all = (0, 0, 0, 0);
    let mut row = |name: &str, (n, reduced, before, after): (usize, usize, usize, usize)| {
        let ratio = if before == 0 { 1.0 } else { after as f64 / before as f64 };
        let _ =
            writeln!(out, "{name:14} {n:>8} {reduced:>8} {before:>12} {after:>12} {ratio:>6.2}");
    };
    for (name, counts) in families {
        row(name, *counts);
        all = (all.0 + counts.0, all.1 + counts.1, all.2 + counts.2, all.3 + counts.3);
    }
    row("all", all);
    out
}

fn explain(args: &ExplainArgs, env: &Env) -> Result<Status> {
    let set = super::load_rules(env);
    let dirs = Dirs::find(env);
    let query = Query { argv: &args.argv, command: args.command.as_deref(), ..Query::default() };
    let sel = select::select(&set, &query, None);
    let mut out = String::new();
    let given = args.command.clone().unwrap_or_else(|| args.argv.join(" "));
    let _ = writeln!(out, "command:  {given}");
    if sel.identity.compound {
        let _ = writeln!(
            out,
            "identity: compound (pipes, `;`, `&&`, subshells…): only the fallback applies"
        );
    } else {
        let _ = writeln!(out, "identity: {}", sel.identity.command);
    }
    let r = sel.rule;
    let _ = writeln!(
        out,
        "rule:     {} ({} layer, {})",
        printable(&r.rule.id),
        r.layer,
        printable_path(&r.path)
    );
    if sel.is_fallback() {
        let _ = writeln!(out, "why:      no other rule matches");
    } else {
        let _ = writeln!(
            out,
            "why:      matches with score {}{}",
            sel.score,
            describe_match(&r.rule.matcher)
        );
    }
    for (other, score) in &sel.runners_up {
        let _ = writeln!(
            out,
            "also:     {} (score {score}, {} layer)",
            printable(&other.rule.id),
            other.layer
        );
    }
    let show =
        |d: &Option<PathBuf>| d.as_ref().map_or_else(|| "(none)".to_owned(), |p| printable_path(p));
    let _ = writeln!(out, "layers:   user {} · project {}", show(&dirs.user), show(&dirs.project));
    emit::stdout(out.trim_end())?;
    Ok(Status::Ok)
}

fn describe_match(m: &crate::rules::schema::Match) -> String {
    let mut parts = Vec::new();
    if let Some(v) = &m.argv0 {
        parts.push(format!("argv0 in {v:?}"));
    }
    if let Some(v) = &m.git_subcommands {
        parts.push(format!("git subcommand in {v:?}"));
    }
    if let Some(v) = &m.argv_includes {
        parts.push(format!("argv includes all of {v:?}"));
    }
    if let Some(v) = &m.argv_includes_any {
        parts.push(format!("argv includes one of {v:?}"));
    }
    if let Some(v) = &m.command_includes {
        parts.push(format!("command includes {v:?}"));
    }
    if let Some(v) = &m.command_includes_any {
        parts.push(format!("command includes one of {v:?}"));
    }
    if let Some(v) = &m.command_regex {
        parts.push(format!("command matches /{}/", printable(v)));
    }
    if parts.is_empty() { String::new() } else { format!(": {}", parts.join(", ")) }
}
