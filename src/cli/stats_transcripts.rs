//! `tj stats --transcripts`: billed tokens per harness session, from the harness's own logs.
//!
//! One row per session, newest first: input, cache read, cache write and output tokens as
//! the harness recorded them (`transcripts::Usage`), the cache hit rate
//! (`cache_read / (input + cache_read + cache_write)`), the estimated tokens of the shell
//! output the agent read, and the share of them that went through tj. A session whose hit
//! rate over the last third of its API calls is more than ten points below the rate over
//! the rest is flagged, and so are the sessions shown taken together (the newest third
//! against the rest).

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use serde_json::{Value, json};

use super::stats::{Args, Format, Since, date_of};
use crate::emit;
use crate::env::Env;
use crate::exit::Status;
use crate::transcripts::{self, Scan, Session, Trend, Usage};

/// What was read: the sessions (joined with the ledger), and where they were looked for.
pub(super) struct Read {
    /// Everything the transcripts held.
    pub(super) scan: Scan,
    /// The directories looked in.
    pub(super) roots: Vec<PathBuf>,
    /// The ledger's runs.
    pub(super) runs: Vec<transcripts::ledger::Run>,
}

/// Reads the transcripts under `dirs` (the harnesses' own directories when empty) and the
/// ledger, joins them, and warns once about whatever was skipped.
pub(super) fn read(dirs: &[PathBuf], env: &Env) -> Read {
    let roots = if dirs.is_empty() { transcripts::default_roots(env) } else { dirs.to_vec() };
    let mut scan = transcripts::scan(&roots);
    if !dirs.is_empty() {
        for missing in &scan.missing {
            crate::diag::warn_once(&format!(
                "transcripts directory `{}` does not exist; skipped",
                missing.display()
            ));
        }
    }
    if let Some(message) = scan.skipped_message() {
        crate::diag::warn_once(&message);
    }
    let runs = read_ledger(env);
    transcripts::ledger::join(&mut scan.sessions, &runs);
    Read { scan, roots, runs }
}

/// The ledger's runs; none, after one warning, if it cannot be read.
fn read_ledger(env: &Env) -> Vec<transcripts::ledger::Run> {
    let Some(path) = env.data_dir().map(|d| d.join("ledger.jsonl")) else { return Vec::new() };
    match transcripts::ledger::read(&path, transcripts::MAX_LINE) {
        Ok((runs, skipped)) => {
            if skipped > 0 {
                crate::diag::warn_once(&format!(
                    "ledger `{}`: skipped {skipped} unreadable {}; the rest was read",
                    path.display(),
                    if skipped == 1 { "line" } else { "lines" }
                ));
            }
            runs
        }
        Err(err) => {
            crate::diag::warn_once(&format!(
                "could not read the ledger `{}`: {err}; going on without it",
                path.display()
            ));
            Vec::new()
        }
    }
}

/// The directories looked in, for a message.
pub(super) fn roots_phrase(roots: &[PathBuf]) -> String {
    let names: Vec<String> = roots.iter().map(|r| format!("`{}`", r.display())).collect();
    if names.is_empty() { "no directory (HOME is not set)".to_owned() } else { names.join(", ") }
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let read = read(&args.transcripts_dir, env);
    let sessions = select(&read.scan.sessions, args.since, args.session.as_deref());
    if sessions.is_empty() && args.format == Format::Text {
        let why = if read.scan.sessions.is_empty() {
            format!("no transcripts found in {}", roots_phrase(&read.roots))
        } else if let Some(id) = &args.session {
            format!("no session matches `{}`", crate::diag::escape(id))
        } else {
            "no session in that time".to_owned()
        };
        emit::stdout(&why)?;
        return Ok(Status::Ok);
    }
    match args.format {
        Format::Text => emit::stdout(&text(&sessions, std::io::stdout().is_terminal()))?,
        Format::Json => emit::json(&json_doc(&sessions, &read))?,
        Format::Csv => emit::stdout(&csv(&sessions))?,
    }
    Ok(Status::Ok)
}

/// The sessions to show, newest first: last seen at or after `since`, and with an id that
/// is or starts with `session`.
fn select<'a>(
    sessions: &'a [Session],
    since: Option<Since>,
    session: Option<&str>,
) -> Vec<&'a Session> {
    let mut shown: Vec<&Session> = sessions
        .iter()
        .filter(|s| since.is_none_or(|Since(t)| s.last.is_some_and(|l| l / 1000 >= t)))
        .filter(|s| session.is_none_or(|id| s.id.starts_with(id)))
        .collect();
    shown.sort_by(|a, b| {
        b.last.cmp(&a.last).then_with(|| a.harness.cmp(&b.harness)).then_with(|| a.id.cmp(&b.id))
    });
    shown
}

/// The sessions' usage added up.
fn total(sessions: &[&Session]) -> Usage {
    let mut sum = Usage::default();
    sessions.iter().for_each(|s| sum.add(&s.usage));
    sum
}

/// The trend across sessions: each session's usage as one entry, oldest first.
fn trend_across(sessions: &[&Session]) -> Option<Trend> {
    let series: Vec<Usage> = sessions.iter().rev().map(|s| s.usage).collect();
    transcripts::trend(&series)
}

/// A session id as the table shows it: its first 8 characters.
fn short(id: &str) -> String {
    id.chars().take(8).collect()
}

fn thousands(n: u64) -> String {
    crate::reduce::group(usize::try_from(n).unwrap_or(usize::MAX))
}

fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "—".to_owned(), |r| format!("{:.0}%", r * 100.0))
}

/// The share of `part` in `all`, if there is any `all`.
fn share(part: u64, all: u64) -> Option<f64> {
    // Lossy: token counts far below 2^52 convert exactly.
    #[allow(clippy::cast_precision_loss)]
    (all > 0).then(|| part as f64 / all as f64)
}

/// The cells of one row: date, four counts, hit rate, shell tokens, share through tj.
fn cells(date: String, usage: &Usage, shell: (u64, u64)) -> Vec<String> {
    vec![
        date,
        thousands(usage.input),
        thousands(usage.cache_read),
        usage.cache_write.map_or_else(|| "—".to_owned(), thousands),
        thousands(usage.output),
        percent(usage.hit_rate()),
        thousands(shell.0),
        percent(share(shell.1, shell.0)),
    ]
}

/// The table, the totals line and the flags.
fn text(sessions: &[&Session], terminal: bool) -> String {
    let mut rows = vec![
        [
            "harness",
            "session",
            "last",
            "input",
            "cache read",
            "cache write",
            "output",
            "hit rate",
            "shell out",
            "via tj",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    let mut shell_sum = (0, 0);
    for s in sessions {
        let date = s.last.map_or_else(|| "—".to_owned(), |l| date_of(l / 1000));
        let shell = s.shell_tokens();
        shell_sum = (shell_sum.0 + shell.0, shell_sum.1 + shell.1);
        let mut row =
            vec![s.harness.name().to_owned(), crate::diag::escape(&short(&s.id)).into_owned()];
        row.extend(cells(date, &s.usage, shell));
        rows.push(row);
    }
    // The count of sessions goes with "total", so the session column keeps its width.
    let mut row = vec![format!("total ({})", sessions.len()), String::new()];
    row.extend(cells(String::new(), &total(sessions), shell_sum));
    rows.push(row);
    let mut out = table(&rows, 3);
    let flag = if terminal { "⚠" } else { "!" };
    for s in sessions {
        if let Some(t) = s.trend().filter(Trend::is_falling) {
            let id = crate::diag::escape(&short(&s.id)).into_owned();
            let _ = write!(
                out,
                "\n{flag} cache hit rate falling in session {id} ({}): {}",
                s.harness.name(),
                arrow(&t)
            );
        }
    }
    if let Some(t) = trend_across(sessions).filter(Trend::is_falling) {
        let _ = write!(
            out,
            "\n{flag} cache hit rate falling across sessions: {} (the newest third against the rest)",
            arrow(&t)
        );
    }
    out
}

fn arrow(t: &Trend) -> String {
    format!("{} → {}", percent(Some(t.before)), percent(Some(t.after)))
}

/// Lays out `rows` (the first is the header) in columns two spaces apart: the first `left`
/// columns left-aligned, the rest right-aligned.
pub(super) fn table(rows: &[Vec<String>], left: usize) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width = |c: usize| {
        rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)
    };
    let widths: Vec<usize> = (0..columns).map(width).collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = widths[c].saturating_sub(cell.chars().count());
            if c < left {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

/// A usage as JSON: the four counts and the hit rate.
fn usage_json(usage: &Usage) -> Value {
    json!({
        "input": usage.input,
        "cacheRead": usage.cache_read,
        "cacheWrite": usage.cache_write,
        "output": usage.output,
        "hitRate": usage.hit_rate(),
    })
}

/// A trend as JSON: the two rates and whether that is a fall; `null` without a trend.
fn trend_json(t: Option<Trend>) -> Value {
    t.map_or(
        Value::Null,
        |t| json!({ "before": t.before, "after": t.after, "falling": t.is_falling() }),
    )
}

/// One JSON document: the sessions, the total, the flags, what was read.
fn json_doc(sessions: &[&Session], read: &Read) -> Value {
    let rows: Vec<Value> = sessions
        .iter()
        .map(|s| {
            let (shell, tj) = s.shell_tokens();
            let mut row = json!({
                "harness": s.harness.name(),
                "session": s.id,
                "cwd": s.cwd,
                "firstTime": s.first.map(|t| t / 1000),
                "lastTime": s.last.map(|t| t / 1000),
                "apiCalls": s.api_calls,
                "shellCalls": s.shell.len(),
                "shellTokens": shell,
                "tjTokens": tj,
                "tjShare": share(tj, shell),
                "hitRateTrend": trend_json(s.trend()),
            });
            merge(&mut row, usage_json(&s.usage));
            row
        })
        .collect();
    let (shell, tj) =
        sessions.iter().map(|s| s.shell_tokens()).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let mut sum = json!({ "sessions": sessions.len(), "shellTokens": shell, "tjTokens": tj, "tjShare": share(tj, shell) });
    merge(&mut sum, usage_json(&total(sessions)));
    json!({
        "sessions": rows,
        "total": sum,
        "hitRateTrendAcrossSessions": trend_json(trend_across(sessions)),
        "read": {
            "directories": read.roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>(),
            "files": read.scan.files,
            "skippedLines": read.scan.skipped.lines,
            "ledgerRuns": read.runs.len(),
        },
    })
}

/// Adds the fields of `extra` (an object) to `into` (an object).
fn merge(into: &mut Value, extra: Value) {
    if let (Value::Object(into), Value::Object(extra)) = (into, extra) {
        into.extend(extra);
    }
}

/// One CSV row per session, with a header; no totals row (a consumer sums what it needs).
fn csv(sessions: &[&Session]) -> String {
    let mut out = String::from(
        "harness,session,first_time,last_time,input,cache_read,cache_write,output,hit_rate,api_calls,shell_calls,shell_tokens,tj_tokens,tj_share,hit_rate_falling\n",
    );
    let opt = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.4}"));
    for s in sessions {
        let (shell, tj) = s.shell_tokens();
        let u = &s.usage;
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            s.harness.name(),
            csv_field(&s.id),
            s.first.map_or_else(String::new, |t| (t / 1000).to_string()),
            s.last.map_or_else(String::new, |t| (t / 1000).to_string()),
            u.input,
            u.cache_read,
            u.cache_write.map_or_else(String::new, |w| w.to_string()),
            u.output,
            opt(u.hit_rate()),
            s.api_calls,
            s.shell.len(),
            shell,
            tj,
            opt(share(tj, shell)),
            s.trend().is_some_and(|t| t.is_falling()),
        );
    }
    out
}

/// `field` as one CSV field: quoted when it holds a comma, a quote or a line break.
pub(super) fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_aligns_text_left_and_numbers_right() {
        let rows = vec![
            vec!["a".to_owned(), "n".to_owned()],
            vec!["long".to_owned(), "1,000".to_owned()],
            vec!["b".to_owned(), "2".to_owned()],
        ];
        assert_eq!(table(&rows, 1), "a         n\nlong  1,000\nb         2");
    }

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("abc"), "abc");
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
    }
}
