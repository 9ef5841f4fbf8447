//! `tj audit`: what a session's context holds and what `tj compact` would do to it. Reads
//! only: it never writes, not even to the store.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::emit;
use crate::env::Env;
use crate::exit::Status;
use crate::session::plan::{self, Plan};
use crate::session::{Transcript, locate};
use crate::store::Store;

/// Show what a session's context holds and what `tj compact` would drop
///
/// SESSION is a Claude Code or Codex session log (`.jsonl`), or a session id looked up under
/// `~/.claude/projects` and `~/.codex/sessions`. Tool results are ranked by size, each with
/// its tool, command or path, age in turns, and what `tj compact` would do to it and why.
/// Nothing is written.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session log, or its id
    session: String,

    /// The newest messages `tj compact` never touches
    #[arg(long, value_name = "N", default_value_t = 12)]
    keep_last: usize,

    /// Every result, not only the largest 30 (JSON always has every result)
    #[arg(long)]
    all: bool,

    /// How to print: text (a table) or json (one document, for scripts and adapters)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Output formats of `tj audit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// A table for people
    #[default]
    Text,
    /// One JSON document
    Json,
}

/// Results shown without `--all`.
const SHOWN: usize = 30;

/// The largest session log read.
const LOG_LIMIT: u64 = 1 << 30;

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let (path, bytes, transcript) = load(&args.session, env)?;
    let plan = plan_for(&transcript, &bytes, args.keep_last, env);
    let out = match args.format {
        Format::Text => report(&path, &transcript, &plan, args.all),
        Format::Json => {
            let mut doc = serde_json::to_string_pretty(&document(&path, &transcript, &plan))
                .context("could not encode the audit as JSON")?;
            doc.push('\n');
            doc
        }
    };
    emit::stdout(&out)?;
    Ok(Status::Ok)
}

/// The log `session` names, read and parsed.
pub(super) fn load(session: &str, env: &Env) -> Result<(PathBuf, Vec<u8>, Transcript)> {
    let path = locate::locate(session, env)?;
    let bytes = crate::fsx::read_regular(&path, true, LOG_LIMIT)
        .map_err(read_error)
        .with_context(|| format!("could not read `{}`", path.display()))?;
    let transcript = Transcript::parse(&bytes).with_context(|| format!("`{}`", path.display()))?;
    Ok((path, bytes, transcript))
}

/// [`crate::fsx::ReadError`] as an error to report.
fn read_error(err: crate::fsx::ReadError) -> anyhow::Error {
    match err {
        crate::fsx::ReadError::Io(err) => err.into(),
        crate::fsx::ReadError::NotRegular(kind) => {
            anyhow::anyhow!("it is {kind}, not a regular file")
        }
        crate::fsx::ReadError::TooLarge => anyhow::anyhow!("it is larger than {LOG_LIMIT} bytes"),
    }
}

/// The plan for `t`, asking the store (if there is one) which originals it holds.
pub(super) fn plan_for(t: &Transcript, bytes: &[u8], keep_last: usize, env: &Env) -> Plan {
    let store = Store::new(env).ok();
    let stored = |id: &str| store.as_ref().is_some_and(|s| s.resolve(id).is_ok());
    plan::plan(t, bytes, plan::Options { keep_last }, &stored)
}

/// The report: the totals, then the results, largest first.
fn report(path: &std::path::Path, t: &Transcript, plan: &Plan, all: bool) -> String {
    let mut out = String::new();
    let before = t.tokens();
    let in_results: usize = t.results.iter().map(|r| r.tokens).sum();
    let reclaim: usize = plan.dropped().map(|i| t.results[i].tokens).sum();
    let dropped = plan.dropped().count();
    let _ = writeln!(
        out,
        "{} ({} session, {} lines, {} messages, {} turns)",
        path.display(),
        t.harness.title(),
        t.lines.len(),
        t.messages().count(),
        t.turns
    );
    let _ = writeln!(
        out,
        "context: ~{before} tokens (estimated), ~{in_results} of them in {} tool results",
        t.results.len()
    );
    let _ = writeln!(
        out,
        "tj compact would drop {dropped} results, ~{reclaim} tokens (before placeholders)\n"
    );
    let mut order: Vec<usize> = (0..t.results.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(t.results[i].tokens), i));
    let _ = writeln!(
        out,
        "{:>8} {:>9} {:>4}  {:<6} {:<10} {:<48} why",
        "tokens", "bytes", "age", "action", "tool", "command or path"
    );
    let limit = if all { order.len() } else { SHOWN };
    for &i in order.iter().take(limit) {
        let r = &t.results[i];
        let call = &t.calls[r.call];
        let age = t.turns.saturating_sub(t.lines[call.line].turn);
        let v = &plan.verdicts[i];
        let _ = writeln!(
            out,
            "{:>8} {:>9} {:>4}  {:<6} {:<10} {:<48} {}",
            r.tokens,
            r.text.as_deref().map_or(0, str::len),
            age,
            if v.drop { "drop" } else { "keep" },
            call.tool,
            clip(&call.label, 48),
            v.why
        );
    }
    if order.len() > limit {
        let rest: usize = order[limit..].iter().map(|&i| t.results[i].tokens).sum();
        let _ = writeln!(
            out,
            "… {} smaller results (~{rest} tokens) not shown; --all shows them",
            order.len() - limit
        );
    }
    out
}

/// The audit as one JSON document: the totals, then every result in log order with what
/// `tj compact` would do to it.
fn document(path: &std::path::Path, t: &Transcript, plan: &Plan) -> serde_json::Value {
    let results: Vec<serde_json::Value> = t
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let call = &t.calls[r.call];
            let v = &plan.verdicts[i];
            serde_json::json!({
                "line": r.line + 1,
                "call_id": call.id,
                "tool": call.tool,
                "label": call.label,
                "tokens": r.tokens,
                "bytes": r.text.as_deref().map(str::len),
                "age_turns": t.turns.saturating_sub(t.lines[call.line].turn),
                "failed": r.failed,
                "action": if v.drop { "drop" } else { "keep" },
                "why": v.why,
            })
        })
        .collect();
    serde_json::json!({
        "path": path.display().to_string(),
        "harness": t.harness.title(),
        "session_id": t.session_id,
        "lines": t.lines.len(),
        "messages": t.messages().count(),
        "turns": t.turns,
        "tokens": {
            "context": t.tokens(),
            "in_results": t.results.iter().map(|r| r.tokens).sum::<usize>(),
            "reclaimable": plan.dropped().map(|i| t.results[i].tokens).sum::<usize>(),
        },
        "dropped": plan.dropped().count(),
        "results": results,
    })
}

/// `text` on one line, cut to `max` characters.
fn clip(text: &str, max: usize) -> String {
    let flat: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if flat.chars().count() <= max {
        return flat;
    }
    flat.chars().take(max - 1).chain(['…']).collect()
}
