//! `tj rules replay`: a rule set run over the stored originals, before it ships.
//!
//! Each original is reduced in memory as tj reduced it when it ran (its argv or command,
//! exit code, terminal width, bytes; the same configuration, redaction, artifact notice and
//! exit-code line), once with the rule set before and once with the set after, and the two
//! renditions are compared. The report says, per rule, how many renditions change, how many
//! lose evidence and what the tokens do; it exits 1 when any artifact loses evidence, so CI
//! can gate a rule change.
//!
//! Read only: nothing here persists, writes metadata or renditions, appends to the ledger
//! or sweeps. The store is listed, originals are read (bounded) and reduced; that is all.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::stats::{Format, Since};
use crate::config::Config;
use crate::env::Env;
use crate::exit::Status;
use crate::reduce::{self, ArtifactRef, Input, Options, Passthrough, Rejection};
use crate::rules::{RuleSet, load, printable, printable_path};
use crate::store::{Metadata, Store};
use crate::{diag, emit, fsx};

/// Replay the rules over the stored originals: what changes, what loses evidence, the tokens
///
/// Without --rules, each stored original is reduced with the current rules and compared
/// with the rendition stored when it ran: what changed since (a tj upgrade, an edited user
/// or project rule). With --rules DIR, the current rules (builtin, user, project) are the
/// "before", and the same set with every rule file under DIR layered on top, as a project
/// layer is (a rule with the same id replaces the current one; new ids are added), is the
/// "after": try an edited copy of a rule before shipping it.
///
/// An artifact loses evidence when the evidence invariant rejects the rule's rendition (tj
/// would send the whole original instead), or when an evidence line of the original that
/// the "before" rendition shows is missing from the "after" one. Nothing is written: not the
/// store, not the ledger. Exits 0 when no artifact loses evidence, 1 when one does, 2 when
/// DIR cannot be used.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Layer the rule files (*.json) under DIR on top of the current rules and compare with
    /// the current rules; without it, compare the current rules with the stored renditions
    #[arg(long, value_name = "DIR")]
    rules: Option<PathBuf>,

    /// Replay at most N originals, newest first (after --since and --command)
    #[arg(long, value_name = "N", default_value_t = 200)]
    limit: usize,

    /// Only originals stored since WHEN: a date (2026-11-30), or an age (90m, 12h, 7d, 2w)
    #[arg(long, value_name = "WHEN", value_parser = super::stats::parse_since)]
    since: Option<Since>,

    /// Report only the artifacts whose rule, before or after, is ID (the others still count
    /// toward --limit)
    #[arg(long, value_name = "ID")]
    rule: Option<String>,

    /// Only originals whose command contains TEXT
    #[arg(long, value_name = "TEXT")]
    command: Option<String>,

    /// Replay at most this many bytes of an original: a larger one is replayed on its first
    /// BYTES (cut at a line end) with --rules, and skipped without (its stored rendition was
    /// made from all of it)
    #[arg(long, value_name = "BYTES", default_value_t = reduce::stream::WHOLE_MAX,
          value_parser = clap::value_parser!(usize))]
    max_bytes: usize,

    /// How to print: text (a table), json or csv (the per-rule rows)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// The exit status of a usage error, as clap gives its own.
const USAGE: Status = Status::Child(2);

/// Lost evidence lines named per artifact; the rest are counted.
const LOST_SHOWN: usize = 5;

/// Characters of a lost line or a command shown; the rest is cut with `…`.
const SHOWN_CHARS: usize = 160;

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let sets = match Sets::load(args.rules.as_deref(), env) {
        Ok(sets) => sets,
        Err(err) => {
            diag::error(&err);
            return Ok(USAGE);
        }
    };
    let store = Store::new(env)?;
    let (listed, corrupt) = store.list().context("could not list the stored originals")?;
    if listed.is_empty() && corrupt == 0 {
        let dir =
            env.data_dir().map_or_else(|| "(no data directory)".to_owned(), |d| printable_path(&d));
        let message = format!(
            "nothing to replay: no original is stored in `{dir}` (tj stores one for each output it reduces: tj run, tj reduce)"
        );
        if args.format == Format::Text {
            emit::stdout(&message)?;
            return Ok(Status::Ok);
        }
        // JSON and CSV stay parseable: the empty report follows.
        diag::note(&message);
    }
    let config = super::load_config(env);
    let mut report = Report { unreadable: corrupt, ..Report::default() };
    let chosen = listed.iter().filter(|meta| is_chosen(args, meta)).take(args.limit);
    for meta in chosen {
        match replay(&store, meta, &sets, &config, args.max_bytes) {
            Ok(replayed) if is_reported(args, &replayed) => report.add(&replayed),
            Ok(_) => {}
            Err(Skip::Unreadable) => report.unreadable += 1,
            Err(Skip::NoRendition) => report.no_rendition += 1,
            Err(Skip::TooLarge) => report.too_large += 1,
        }
    }
    warn_skipped(&report, args.max_bytes);
    match args.format {
        Format::Text => emit::stdout(&text_report(&report, &sets, args))?,
        Format::Json => emit::json(&json_report(&report, &sets))?,
        Format::Csv => emit::stdout(&csv_report(&report))?,
    }
    Ok(if report.lost() == 0 { Status::Ok } else { Status::Failure })
}

/// Whether `meta` passes `--since` and `--command` (the filters applied before replaying).
fn is_chosen(args: &Args, meta: &Metadata) -> bool {
    args.since.is_none_or(|Since(since)| meta.created_at >= since)
        && args.command.as_deref().is_none_or(|text| command_of(meta).contains(text))
}

/// Whether a replayed artifact passes `--rule`.
fn is_reported(args: &Args, replayed: &Replayed) -> bool {
    args.rule.as_deref().is_none_or(|id| replayed.before.rule == id || replayed.after.rule == id)
}

/// The command an artifact was stored for, as a shell string.
fn command_of(meta: &Metadata) -> String {
    meta.command.clone().unwrap_or_else(|| meta.argv.join(" "))
}

/// One warning for each kind of original that was not replayed.
fn warn_skipped(report: &Report, max_bytes: usize) {
    if report.unreadable > 0 {
        let entries = match report.unreadable {
            1 => "1 unreadable or corrupt store entry".to_owned(),
            n => format!("{n} unreadable or corrupt store entries"),
        };
        diag::warn_once(&format!(
            "skipped {entries} (metadata that does not parse, an original that cannot be read)"
        ));
    }
    if report.no_rendition > 0 {
        diag::warn_once(&format!(
            "skipped {} with no stored rendition to compare with (--rules DIR compares rule sets instead)",
            plural(report.no_rendition, "original")
        ));
    }
    if report.too_large > 0 {
        let max = reduce::group(max_bytes);
        diag::warn_once(&format!(
            "skipped {} larger than {max} bytes: the stored renditions were made from all of their bytes (raise --max-bytes, or compare rule sets with --rules DIR, which replays the first {max})",
            plural(report.too_large, "original")
        ));
    }
}

/// The two rule sets compared.
struct Sets {
    /// `None`: "before" is the rendition stored with each original.
    before: Option<RuleSet>,
    /// The rules "after".
    after: RuleSet,
    /// With `--rules`: the directory and the ids of its rules, each with whether it
    /// replaces a current rule.
    proposed: Option<(PathBuf, Vec<(String, bool)>)>,
}

impl Sets {
    /// The current rules and, with `dir`, the proposed ones. An error names what is wrong
    /// with `dir` or a file under it: a proposed rule that does not load must not pass for
    /// one that changes nothing.
    fn load(dir: Option<&Path>, env: &Env) -> Result<Sets> {
        let current = super::load_rules(env);
        let Some(dir) = dir else {
            return Ok(Sets { before: None, after: current, proposed: None });
        };
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => bail!("--rules `{}` is not a directory", printable_path(dir)),
            Err(err) => bail!("could not read --rules `{}`: {err}", printable_path(dir)),
        }
        let mut after = load::load_proposed(env, dir);
        // The other layers' problems were warned about loading the current set.
        let ours = std::mem::take(&mut after.problems).into_iter().filter(|p| is_under(p, dir));
        let mut fatal = Vec::new();
        for problem in ours {
            let message = problem.to_string();
            if problem.is_fatal() {
                // Not skipped: nothing is replayed.
                fatal.push(message.strip_suffix("; skipped").unwrap_or(&message).to_owned());
            } else {
                diag::warn_once(&message);
            }
        }
        if !fatal.is_empty() {
            bail!("{}; nothing was replayed", fatal.join("; "));
        }
        let proposed: Vec<(String, bool)> = after
            .rules()
            .iter()
            .filter(|r| r.path.starts_with(dir))
            .map(|r| (r.rule.id.clone(), current.get(&r.rule.id).is_some()))
            .collect();
        if proposed.is_empty() {
            bail!("no rule file (*.json) under --rules `{}`", printable_path(dir));
        }
        Ok(Sets { before: Some(current), after, proposed: Some((dir.to_path_buf(), proposed)) })
    }
}

/// Returns true if and only if `problem` is about a path under `dir`.
fn is_under(problem: &crate::rules::LoadError, dir: &Path) -> bool {
    use crate::rules::LoadError as E;
    let path = match problem {
        E::Read { path, .. }
        | E::Parse { path, .. }
        | E::Invalid { path, .. }
        | E::UnknownKeys { path, .. }
        | E::NotRegular { path, .. }
        | E::Escapes { path, .. }
        | E::NotWalked { path, .. } => path,
    };
    path.starts_with(dir)
}

/// Why an original was not replayed.
enum Skip {
    /// Its id, original or metadata could not be read.
    Unreadable,
    /// No rendition was stored with it, and there is nothing else to compare with.
    NoRendition,
    /// Larger than `--max-bytes`, and only its stored rendition to compare with.
    TooLarge,
}

/// One rendition of an original, as tj would emit it.
struct Side {
    /// The rendition, redacted as tj redacts it.
    text: String,
    /// The rule that made it.
    rule: String,
    /// A reduction was adopted (not the original).
    reduced: bool,
    /// The adopted reduction dropped nothing.
    lossless: bool,
    /// The evidence line the invariant found missing, when it rejected the rule's rendition.
    missing: Option<String>,
    /// Estimated tokens of `text`, as the ledger counts them.
    tokens: usize,
}

impl Side {
    /// The side of a reduction; `redact` as the configuration says.
    fn of(mut reduction: reduce::Reduction, redact: bool) -> Side {
        if redact {
            super::redact(&mut reduction);
        }
        let missing = match reduction.passthrough {
            Some(Passthrough::Rejected(Rejection::MissingEvidence { ref line })) => {
                Some(line.clone())
            }
            _ => None,
        };
        Side {
            reduced: reduction.is_reduced(),
            lossless: reduction.lossless,
            rule: reduction.rule,
            tokens: reduce::tokens::estimate(&reduction.text),
            text: reduction.text,
            missing,
        }
    }
}

/// What replaying one original found.
struct Replayed {
    /// The artifact id.
    id: String,
    /// The command it was stored for, as stored (unescaped, unredacted).
    command: String,
    /// When it was stored, in seconds since the Unix epoch.
    created_at: u64,
    /// The rendition before: stored, or made with the current rules.
    before: Side,
    /// The rendition after: made with the current or the proposed rules.
    after: Side,
    /// Only the first `--max-bytes` of the original were replayed.
    truncated: bool,
    /// Evidence lines the "after" rendition loses: the invariant's, then the others in the
    /// original's order.
    lost: Vec<String>,
}

impl Replayed {
    /// Returns true if and only if the renditions before and after differ.
    fn changed(&self) -> bool {
        self.before.text != self.after.text
    }
}

/// Replays one original.
fn replay(
    store: &Store,
    meta: &Metadata,
    sets: &Sets,
    config: &Config,
    max_bytes: usize,
) -> Result<Replayed, Skip> {
    // The id comes from a file: it must name a file of the store, nothing else.
    if !fsx::is_id(&meta.id) {
        return Err(Skip::Unreadable);
    }
    let (raw, cut) = read_head(store, &meta.id, max_bytes).map_err(|_| Skip::Unreadable)?;
    // Past the disk cap, tj kept the head and the tail: what it reduced is not all stored.
    let truncated = cut || meta.dropped_bytes > 0;
    let limit = u64::try_from(max_bytes).unwrap_or(u64::MAX).saturating_mul(2);
    let stored = store.read_rendition_within(&meta.id, limit).ok();
    let artifact =
        ArtifactRef { id: meta.id.clone(), path: store.spill_path(&meta.id).display().to_string() };
    let opts = Options {
        limits: config.limits,
        raw: false,
        artifact: Some(&artifact),
        hide_exit: !shows_exit(meta, stored.as_deref()),
        previous: None,
    };
    let input = Input {
        raw: &raw,
        argv: &meta.argv,
        command: meta.command.as_deref(),
        tool_name: None,
        exit_code: meta.exit_code,
        cols: meta.cols,
    };
    let after = super::reduce_reporting(&input, &sets.after, &opts);
    let (before, after) = match &sets.before {
        Some(current) => {
            let before = super::reduce_reporting(&input, current, &opts);
            (Side::of(before, config.redact), Side::of(after, config.redact))
        }
        None if truncated => return Err(Skip::TooLarge),
        None => {
            // A run-to-run delta led it: that depended on the run before, not on the rules.
            let stored = stored.ok_or(Skip::NoRendition)?;
            let stored = match reduce::delta::without_header(&stored) {
                body if body.len() < stored.len() => body.to_owned(),
                _ => stored,
            };
            let before = Side {
                rule: meta.rule.clone().unwrap_or_default(),
                reduced: meta.reduced,
                lossless: false,
                missing: None,
                tokens: reduce::tokens::estimate(&stored),
                text: stored,
            };
            let after = after_as_stored(after, &before.text, config.redact);
            (before, after)
        }
    };
    let lost = lost_evidence(&raw, meta.cols, &before, &after);
    Ok(Replayed {
        id: meta.id.clone(),
        command: command_of(meta),
        created_at: meta.created_at,
        before,
        after,
        truncated,
        lost,
    })
}

/// The "after" side of a reduction compared with a stored rendition: redacted as configured,
/// unless the stored one is the unredacted text (the run had `--no-redact`, which the store
/// does not record), so that redaction alone never reads as a change.
fn after_as_stored(after: reduce::Reduction, stored: &str, redact: bool) -> Side {
    if redact && after.text == stored {
        return Side::of(after, false);
    }
    Side::of(after, redact)
}

/// Whether the rendition of `meta` had tj's `[tj] exit N` line: `tj reduce` never adds it;
/// `tj run` adds it unless the harness or a side channel shows the code, which only the
/// stored rendition tells (its first line); without one, unless the host shows the code.
fn shows_exit(meta: &Metadata, stored: Option<&str>) -> bool {
    let Some(code) = meta.exit_code.filter(|&c| c != 0) else { return false };
    if meta.mode.as_deref() == Some("reduce") {
        return false;
    }
    match stored {
        Some(text) => text.lines().next() == Some(format!("[tj] exit {code}").as_str()),
        None => !meta
            .host
            .as_deref()
            .and_then(crate::host::Host::parse)
            .is_some_and(crate::host::Host::shows_exit_code),
    }
}

/// The first `max` bytes of the original `id`, cut after its last full line when it is
/// longer, and whether it was. Never reads more than `max + 1` bytes: the store may hold
/// outputs of hundreds of megabytes.
fn read_head(store: &Store, id: &str, max: usize) -> std::io::Result<(Vec<u8>, bool)> {
    let file = fsx::open_read(&store.spill_path(id))?;
    let mut bytes = Vec::new();
    file.take(u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() <= max {
        return Ok((bytes, false));
    }
    bytes.truncate(max);
    if let Some(end) = bytes.iter().rposition(|&b| b == b'\n') {
        bytes.truncate(end + 1);
    }
    Ok((bytes, true))
}

/// The evidence lines of the original that `after` loses: the line the evidence invariant
/// found missing when it rejected the rule's rendition, and every evidence line (by the
/// invariant's own classifier) that `before` shows and an adopted lossy `after` does not.
/// Lines `before` did not show either (a diagnostics sample, a re-encoding) are not news.
fn lost_evidence(raw: &[u8], cols: Option<u16>, before: &Side, after: &Side) -> Vec<String> {
    let mut lost: Vec<String> = after.missing.iter().cloned().collect();
    if !after.reduced || after.lossless || before.text == after.text {
        return lost;
    }
    let before_lines: HashSet<&str> = before.text.lines().collect();
    let after_lines: HashSet<&str> = after.text.lines().collect();
    // Renditions are redacted; evidence lines come from the original, which is not.
    let shows = |lines: &HashSet<&str>, line: &str| {
        lines.contains(line) || lines.contains(crate::redact::redact(line).as_ref())
    };
    for line in reduce::evidence_of(raw, cols) {
        let was_shown = before.lossless || shows(&before_lines, &line);
        if was_shown && !shows(&after_lines, &line) && !lost.contains(&line) {
            lost.push(line);
        }
    }
    lost
}

/// Counts for one rule (or all).
#[derive(Clone, Copy, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    replayed: usize,
    changed: usize,
    /// Artifacts whose rule after is not their rule before.
    reselected: usize,
    evidence_lost: usize,
    tokens_before: usize,
    tokens_after: usize,
}

impl Row {
    fn add(&mut self, r: &Replayed) {
        self.replayed += 1;
        self.changed += usize::from(r.changed());
        self.reselected += usize::from(r.before.rule != r.after.rule);
        self.evidence_lost += usize::from(!r.lost.is_empty());
        self.tokens_before += r.before.tokens;
        self.tokens_after += r.after.tokens;
    }

    /// Tokens after minus tokens before.
    fn delta(&self) -> i64 {
        let signed = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        signed(self.tokens_after) - signed(self.tokens_before)
    }

    /// [`Row::delta`] as a percentage of the tokens before (0 when there were none).
    fn percent(&self) -> f64 {
        if self.tokens_before == 0 {
            0.0
        } else {
            self.delta() as f64 * 100.0 / self.tokens_before as f64
        }
    }
}

/// Everything replayed, and what was skipped.
#[derive(Default)]
struct Report {
    /// Per rule after, by id.
    rules: BTreeMap<String, Row>,
    all: Row,
    /// The artifacts that changed or lose evidence, newest first (their renditions are
    /// not kept: 200 of them may be megabytes each).
    artifacts: Vec<Listed>,
    truncated: usize,
    unreadable: usize,
    no_rendition: usize,
    too_large: usize,
}

impl Report {
    /// Counts `replayed` under its rule after, and lists it if it changed or loses evidence.
    fn add(&mut self, replayed: &Replayed) {
        self.rules.entry(replayed.after.rule.clone()).or_default().add(replayed);
        self.all.add(replayed);
        self.truncated += usize::from(replayed.truncated);
        if replayed.changed() || !replayed.lost.is_empty() {
            self.artifacts.push(Listed::of(replayed));
        }
    }

    /// How many artifacts lose evidence.
    fn lost(&self) -> usize {
        self.all.evidence_lost
    }
}

/// `text` made safe to print and short: secrets redacted, control characters escaped,
/// cut at [`SHOWN_CHARS`].
fn shown(text: &str) -> String {
    let redacted = crate::redact::redact(text);
    let safe = printable(&redacted);
    match safe.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", &safe[..at]),
        None => safe.into_owned(),
    }
}

/// What "before" and "after" are, in one line.
fn describe(sets: &Sets) -> String {
    match &sets.proposed {
        None => "before: the renditions stored with them · after: the current rules".to_owned(),
        Some((dir, ids)) => {
            let ids: Vec<String> = ids
                .iter()
                .map(|(id, replaces)| {
                    let how = if *replaces { "replaces the current one" } else { "new" };
                    format!("{} ({how})", printable(id))
                })
                .collect();
            format!(
                "before: the current rules · after: the current rules with {} from `{}`: {}",
                plural(ids.len(), "rule"),
                printable_path(dir),
                ids.join(", ")
            )
        }
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A signed, grouped token delta with its percentage: `-9,135 (-74.0%)`.
fn signed_delta(row: &Row) -> String {
    let delta = row.delta();
    let sign = if delta > 0 {
        "+"
    } else if delta < 0 {
        "-"
    } else {
        ""
    };
    let magnitude = usize::try_from(delta.unsigned_abs()).unwrap_or(usize::MAX);
    format!("{sign}{} ({:+.1}%)", reduce::group(magnitude), row.percent())
}

/// The report for people: the per-rule table, the artifacts that lose evidence, a verdict.
fn text_report(report: &Report, sets: &Sets, args: &Args) -> String {
    let mut out = format!("replayed {} (newest first)\n", plural(report.all.replayed, "original"));
    let _ = writeln!(out, "{}\n", describe(sets));
    let ids: Vec<(String, &Row)> =
        report.rules.iter().map(|(id, row)| (printable(id).into_owned(), row)).collect();
    let width = ids.iter().map(|(id, _)| id.chars().count()).max().unwrap_or(0).max(4);
    let _ = writeln!(
        out,
        "{:width$}  {:>8}  {:>7}  {:>10}  {:>4}  {:>13}  {:>12}  delta",
        "rule", "replayed", "changed", "reselected", "lost", "tokens before", "tokens after"
    );
    let mut row = |name: &str, r: &Row| {
        let _ = writeln!(
            out,
            "{name:width$}  {:>8}  {:>7}  {:>10}  {:>4}  {:>13}  {:>12}  {}",
            r.replayed,
            r.changed,
            r.reselected,
            r.evidence_lost,
            reduce::group(r.tokens_before),
            reduce::group(r.tokens_after),
            signed_delta(r)
        );
    };
    for (id, r) in &ids {
        row(id, r);
    }
    row("all", &report.all);
    lost_section(&mut out, report);
    if report.truncated > 0 {
        let (n, max) = (report.truncated, reduce::group(args.max_bytes));
        let (were, their) =
            if n == 1 { ("original was", "its") } else { ("originals were", "their") };
        let _ = writeln!(
            out,
            "\n{n} {were} larger than {max} bytes: only {their} first {max} bytes were replayed"
        );
    }
    let lost = report.lost();
    let verdict = match lost {
        0 => "\nok: no artifact loses evidence".to_owned(),
        1 => "\nFAILED: 1 artifact loses evidence".to_owned(),
        n => format!("\nFAILED: {n} artifacts lose evidence"),
    };
    out.push_str(&verdict);
    out
}

/// The artifacts that lose evidence, each with its command, rules and first lost lines.
fn lost_section(out: &mut String, report: &Report) {
    let losing: Vec<&Listed> = report.artifacts.iter().filter(|r| r.evidence_lost > 0).collect();
    if losing.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nevidence lost:");
    for r in losing {
        let rules = if r.rule_before == r.rule_after {
            printable(&r.rule_after).into_owned()
        } else {
            format!("{} → {}", printable(&r.rule_before), printable(&r.rule_after))
        };
        let _ = writeln!(out, "  {}  {}  ({rules})", r.id, r.command);
        if r.rejected {
            let also = if r.rejected_before { " (the current rules too)" } else { "" };
            let _ = writeln!(
                out,
                "    the evidence invariant rejects the rule's rendition{also}: tj would send the whole original (it names the first line dropped)"
            );
        }
        for line in &r.lost_lines {
            let _ = writeln!(out, "    lost: {line}");
        }
        if r.evidence_lost > r.lost_lines.len() {
            let _ = writeln!(out, "    … and {} more", r.evidence_lost - r.lost_lines.len());
        }
    }
}

/// One rule's row in JSON.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonRow<'a> {
    rule: &'a str,
    #[serde(flatten)]
    row: Row,
    token_delta: i64,
    token_delta_percent: f64,
}

impl<'a> JsonRow<'a> {
    fn new(rule: &'a str, row: &Row) -> JsonRow<'a> {
        // One decimal, as the text shows it.
        let percent = (row.percent() * 10.0).round() / 10.0;
        JsonRow { rule, row: *row, token_delta: row.delta(), token_delta_percent: percent }
    }
}

/// What the report keeps of a changed or evidence-losing artifact; also its JSON form.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    /// The artifact id.
    id: String,
    /// Its command, redacted and escaped ([`shown`]).
    command: String,
    /// When it was stored, in seconds since the Unix epoch.
    created_at: u64,
    /// The rule before.
    rule_before: String,
    /// The rule after.
    rule_after: String,
    /// The renditions before and after differ.
    changed: bool,
    /// Estimated tokens before.
    tokens_before: usize,
    /// Estimated tokens after.
    tokens_after: usize,
    /// Only the first `--max-bytes` were replayed.
    truncated: bool,
    /// The evidence invariant rejected the "after" rendition.
    rejected: bool,
    /// ... and the "before" one (with `--rules`: the current rules lose it too).
    rejected_before: bool,
    /// How many evidence lines the "after" rendition loses.
    evidence_lost: usize,
    /// The first [`LOST_SHOWN`] of them, redacted and escaped.
    lost_lines: Vec<String>,
}

impl Listed {
    fn of(r: &Replayed) -> Listed {
        Listed {
            id: r.id.clone(),
            command: shown(&r.command),
            created_at: r.created_at,
            rule_before: r.before.rule.clone(),
            rule_after: r.after.rule.clone(),
            changed: r.changed(),
            tokens_before: r.before.tokens,
            tokens_after: r.after.tokens,
            truncated: r.truncated,
            rejected: r.after.missing.is_some(),
            rejected_before: r.before.missing.is_some(),
            evidence_lost: r.lost.len(),
            lost_lines: r.lost.iter().take(LOST_SHOWN).map(|l| shown(l)).collect(),
        }
    }
}

/// The whole report as one JSON document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonReport<'a> {
    before: &'static str,
    after: &'static str,
    proposed_dir: Option<String>,
    proposed_rules: Vec<&'a str>,
    replayed: usize,
    evidence_lost: usize,
    truncated: usize,
    skipped_unreadable: usize,
    skipped_no_rendition: usize,
    skipped_too_large: usize,
    rules: Vec<JsonRow<'a>>,
    all: JsonRow<'a>,
    artifacts: &'a [Listed],
}

fn json_report<'a>(report: &'a Report, sets: &'a Sets) -> JsonReport<'a> {
    let (before, after) = match sets.proposed {
        Some(_) => ("current rules", "proposed rules"),
        None => ("stored renditions", "current rules"),
    };
    JsonReport {
        before,
        after,
        proposed_dir: sets.proposed.as_ref().map(|(dir, _)| printable_path(dir)),
        proposed_rules: sets
            .proposed
            .iter()
            .flat_map(|(_, ids)| ids.iter().map(|(id, _)| id.as_str()))
            .collect(),
        replayed: report.all.replayed,
        evidence_lost: report.lost(),
        truncated: report.truncated,
        skipped_unreadable: report.unreadable,
        skipped_no_rendition: report.no_rendition,
        skipped_too_large: report.too_large,
        rules: report.rules.iter().map(|(id, row)| JsonRow::new(id, row)).collect(),
        all: JsonRow::new("all", &report.all),
        artifacts: &report.artifacts,
    }
}

/// The per-rule rows as CSV, with a header and a last `all` row.
fn csv_report(report: &Report) -> String {
    let mut out = String::from(
        "rule,replayed,changed,reselected,evidence_lost,tokens_before,tokens_after,token_delta\n",
    );
    let rows = report.rules.iter().map(|(id, row)| (id.as_str(), row));
    for (id, r) in rows.chain(std::iter::once(("all", &report.all))) {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{}",
            csv_field(id),
            r.replayed,
            r.changed,
            r.reselected,
            r.evidence_lost,
            r.tokens_before,
            r.tokens_after,
            r.delta()
        );
    }
    out
}

/// `text` as one CSV field: quoted when it holds a comma, quote or line break; escaped as
/// [`printable`] escapes it (rule ids come from files nobody vetted).
fn csv_field(text: &str) -> String {
    let safe = printable(text);
    if safe.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", safe.replace('"', "\"\""))
    } else {
        safe.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(text: &str, reduced: bool) -> Side {
        Side {
            text: text.to_owned(),
            rule: "t/t".to_owned(),
            reduced,
            lossless: false,
            missing: None,
            tokens: 0,
        }
    }

    /// A failing cargo test run: two evidence lines among noise.
    const RAW: &str = "running 2 tests\ntest a ... ok\ntest b ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed\n";

    #[test]
    fn an_evidence_line_the_before_showed_and_the_after_drops_is_lost() {
        let before = side("test b ... FAILED\ntest result: FAILED. 1 passed; 1 failed", true);
        let after = side("test result: FAILED. 1 passed; 1 failed", true);
        assert_eq!(lost_evidence(RAW.as_bytes(), None, &before, &after), ["test b ... FAILED"]);
        // The same text, or the original going out whole, loses nothing.
        assert!(lost_evidence(RAW.as_bytes(), None, &before, &before).is_empty());
        assert!(lost_evidence(RAW.as_bytes(), None, &before, &side("x", false)).is_empty());
    }

    #[test]
    fn a_line_the_before_did_not_show_either_is_not_news() {
        let before = side("test result: FAILED. 1 passed; 1 failed", true);
        let after = side("[tj] summary\ntest result: FAILED. 1 passed; 1 failed", true);
        assert!(lost_evidence(RAW.as_bytes(), None, &before, &after).is_empty());
        // Unless the before was lossless: it showed everything, re-encoded.
        let before = Side { lossless: true, ..before };
        assert_eq!(lost_evidence(RAW.as_bytes(), None, &before, &after), ["test b ... FAILED"]);
    }

    #[test]
    fn a_rejection_names_the_line_the_invariant_found_missing() {
        let before = side("test b ... FAILED", true);
        let after = Side { missing: Some("test b ... FAILED".to_owned()), ..side(RAW, false) };
        assert_eq!(lost_evidence(RAW.as_bytes(), None, &before, &after), ["test b ... FAILED"]);
    }

    #[test]
    fn a_redacted_evidence_line_still_counts_as_shown() {
        let line = "error: login failed with password=hunter2";
        let raw = format!("{line}\nok\n");
        assert_eq!(reduce::evidence_of(raw.as_bytes(), None), [line]);
        let redacted = crate::redact::redact(line);
        assert_ne!(redacted, line);
        let before = side(&format!("{redacted}\n[tj] 1 line omitted"), true);
        let after = side(&format!("{redacted}\n[tj] other"), true);
        assert!(lost_evidence(raw.as_bytes(), None, &before, &after).is_empty());
        let dropped = side("[tj] other", true);
        assert_eq!(lost_evidence(raw.as_bytes(), None, &before, &dropped), [line]);
    }

    #[test]
    fn the_exit_line_is_read_from_the_stored_rendition() {
        let run =
            Metadata { exit_code: Some(1), mode: Some("agent".into()), ..Metadata::default() };
        assert!(shows_exit(&run, Some("[tj] exit 1\nerror")));
        // `[tj] exit 1` is not `[tj] exit 101`'s line, nor the other way round.
        assert!(!shows_exit(&run, Some("[tj] exit 101\nerror")));
        assert!(!shows_exit(&run, Some("error")));
        assert!(shows_exit(&run, None));
        let hosted = Metadata { host: Some("claude-code".into()), ..run.clone() };
        assert!(!shows_exit(&hosted, None));
        let reduce = Metadata { mode: Some("reduce".into()), ..run.clone() };
        assert!(!shows_exit(&reduce, Some("[tj] exit 1\nerror")));
        let passed = Metadata { exit_code: Some(0), ..run };
        assert!(!shows_exit(&passed, None));
    }

    #[test]
    fn shown_lines_are_redacted_escaped_and_cut() {
        assert_eq!(shown("a\x1b[31mb"), "a\\u{1b}[31mb");
        assert!(!shown("token password=hunter2").contains("hunter2"));
        let long = "x".repeat(SHOWN_CHARS + 10);
        assert_eq!(shown(&long).chars().count(), SHOWN_CHARS + 1);
    }

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("tests/cargo-test"), "tests/cargo-test");
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
    }

    #[test]
    fn a_signed_delta_has_its_percentage() {
        let row = Row { tokens_before: 1000, tokens_after: 250, ..Row::default() };
        assert_eq!(signed_delta(&row), "-750 (-75.0%)");
        let row = Row { tokens_before: 0, tokens_after: 0, ..Row::default() };
        assert_eq!(signed_delta(&row), "0 (+0.0%)");
    }
}
