//! `tj stats`: what tj saved, from its ledger; with `--transcripts`, what the harness billed.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, IsTerminal as _};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::env::Env;
use crate::exit::Status;
use crate::stats::{Filter, Group, Row, Summary, Totals};
use crate::store::Store;
use crate::{diag, emit, fsx};

/// What tj saved: runs and tokens from the ledger; billed tokens with --transcripts
///
/// Avoided tokens are an estimate: tokens of the original minus tokens of the rendition,
/// both counted by tj's estimator (see README "Statistics"). With --transcripts, the
/// numbers are the harness's own, read from its session logs.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only what happened since WHEN: a date (2026-11-30), or an age (90m, 12h, 7d, 2w)
    #[arg(long, value_name = "WHEN", value_parser = parse_since)]
    pub since: Option<Since>,

    /// Only one session: a TJ_SESSION value, or with --transcripts a harness session id
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    /// How to print: text (a table, with bars on a terminal), json or csv
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Billed tokens: read the harness's own session logs (Claude Code, Codex)
    #[arg(long)]
    pub transcripts: bool,

    /// Read transcripts under DIR instead of the harnesses' own directories (repeatable)
    #[arg(long, value_name = "DIR", requires = "transcripts")]
    pub transcripts_dir: Vec<PathBuf>,

    /// Only these tables: family, rule, command, day (repeatable or comma-separated; all
    /// by default)
    #[arg(long, value_enum, value_name = "GROUP", value_delimiter = ',')]
    pub by: Vec<Group>,

    /// Rows per table in text (0: all); JSON and CSV always have every row
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
}

/// Output formats of `tj stats` and `tj discover`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// A table for people
    #[default]
    Text,
    /// One JSON document
    Json,
    /// Comma-separated rows with a header
    Csv,
}

/// A lower bound on time, in seconds since the Unix epoch, resolved when parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Since(pub u64);

/// `2026-11-30` (midnight UTC) or an age: a number followed by `m`, `h`, `d` or `w`.
pub(crate) fn parse_since(text: &str) -> Result<Since> {
    parse_since_at(text, crate::store::now_secs())
}

/// [`parse_since`] as of `now`.
pub(crate) fn parse_since_at(text: &str, now: u64) -> Result<Since> {
    let text = text.trim();
    if let Some(days) = days_from_date(text) {
        return Ok(Since(days * 86_400));
    }
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit {
        "m" | "min" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => bail!("`{text}` is neither a date (2026-11-30) nor an age (90m, 12h, 7d, 2w)"),
    };
    let Ok(number) = number.parse::<u64>() else {
        bail!("`{text}` is neither a date (2026-11-30) nor an age (90m, 12h, 7d, 2w)");
    };
    Ok(Since(now.saturating_sub(number.saturating_mul(scale))))
}

/// Days since 1970-01-01 of a `YYYY-MM-DD` date (proleptic Gregorian, UTC).
fn days_from_date(text: &str) -> Option<u64> {
    let mut parts = text.splitn(3, '-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: i64 = parts.next()?.parse().ok()?;
    let day: i64 = parts.next()?.parse().ok()?;
    if text.len() != 10 || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    u64::try_from(crate::transcripts::days_from_civil(year, month, day)).ok()
}

/// The UTC date (`YYYY-MM-DD`) of a time in seconds since the Unix epoch.
pub(crate) fn date_of(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    if args.transcripts {
        return super::stats_transcripts::run(args, env);
    }
    let ledger = Store::new(env)?.ledger_path();
    let filter = Filter { since: args.since.map(|s| s.0), session: args.session.as_deref() };
    let summary = read_ledger(&ledger, &filter)?;
    match summary.skipped {
        0 => {}
        1 => diag::warn_once("1 ledger line could not be read; skipped"),
        n => diag::warn_once(&format!("{n} ledger lines could not be read; skipped")),
    }
    let mut groups = if args.by.is_empty() { Group::ALL.to_vec() } else { args.by.clone() };
    groups.sort_unstable();
    groups.dedup();
    let view = View {
        ledger: &ledger,
        since: args.since,
        session: args.session.as_deref(),
        groups: &groups,
        top: args.top,
        bars: io::stdout().is_terminal(),
    };
    let out = match args.format {
        Format::Text => text(&summary, &view),
        Format::Json => serde_json::to_string_pretty(&document(&summary, &view))
            .context("could not encode the statistics as JSON")?,
        Format::Csv => csv(&summary, &groups),
    };
    emit::stdout(&out)?;
    Ok(Status::Ok)
}

/// The ledger at `path` added up; an empty summary when there is none yet. Read as every
/// file of the store is, never through a symbolic link, and only if it is a regular file.
fn read_ledger(path: &Path, filter: &Filter<'_>) -> Result<Summary> {
    let file = match fsx::open_read(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Summary::default()),
        Err(err) => {
            return Err(err)
                .with_context(|| format!("could not read the ledger `{}`", path.display()));
        }
    };
    crate::stats::aggregate(io::BufReader::with_capacity(1 << 16, file), filter)
        .with_context(|| format!("could not read the ledger `{}`", path.display()))
}

/// What to print besides the numbers, and how.
struct View<'a> {
    /// The ledger's path, named in the header and in the empty message.
    ledger: &'a Path,
    /// `--since`, echoed in the header.
    since: Option<Since>,
    /// `--session`, echoed in the header.
    session: Option<&'a str>,
    /// The tables to print, in order.
    groups: &'a [Group],
    /// Rows per table (0: all).
    top: usize,
    /// Draw bars: stdout is a terminal.
    bars: bool,
}

/// How tokens are counted, for the text footnote and the JSON document.
const ESTIMATOR: &str = "tokens are tj's estimate, not a tokenizer's count: about 3.8 \
    characters per token, 0.75 per CJK character; avoided = raw - rendition";

/// Width of the key column of a table.
const KEY_WIDTH: usize = 26;

/// Width of a bar, in terminal cells; a cell holds eight steps.
const BAR_WIDTH: usize = 20;

/// The text report: a header with the totals, one table per grouping, and the footnote on
/// the estimate. Table lines stay under 100 columns (the key column is cut to fit).
fn text(summary: &Summary, view: &View<'_>) -> String {
    let ledger = view.ledger.display().to_string();
    let ledger = diag::escape(&ledger);
    if summary.totals.runs == 0 {
        return empty_message(summary, view, &ledger);
    }
    let t = &summary.totals;
    let mut out = format!("tj stats: {} in {ledger}\n", plural(t.runs, "run"));
    if let Some(filters) = filters(view) {
        let _ = writeln!(out, "only {filters}, of {} recorded", grouped(summary.recorded));
    }
    let _ = write!(
        out,
        "\nruns                {:>14}\n\
         reduced             {:>14}   {} of runs; {} lossless ({} of reduced)\n\
         deduped             {:>14}   identical outputs given as a one-line stub\n",
        grouped(t.runs),
        grouped(t.reduced),
        percent(t.reduced, t.runs),
        grouped(t.lossless),
        percent(t.lossless, t.reduced),
        grouped(t.deduped),
    );
    let _ = writeln!(
        out,
        "tokens (estimate)   {:>14}   raw → {} rendition",
        grouped(t.raw_tokens),
        grouped(t.rendition_tokens)
    );
    let _ = writeln!(
        out,
        "avoided (estimate)  {:>14}   tokens, {} of raw",
        grouped(t.avoided_tokens()),
        percent(t.avoided_tokens(), t.raw_tokens)
    );
    let _ = writeln!(
        out,
        "characters          {:>14}   raw → {} rendition, {} avoided",
        grouped(t.raw_chars),
        grouped(t.rendition_chars),
        grouped(t.avoided_chars())
    );
    for &group in view.groups {
        out.push('\n');
        match group {
            Group::Family => table(&mut out, "family", &keyed(&summary.families), view),
            Group::Rule => table(&mut out, "rule", &keyed(&summary.rules), view),
            Group::Command => table(&mut out, "command", &keyed(&summary.commands), view),
            Group::Day => table(&mut out, "day", &dated(&summary.days), view),
        }
    }
    let _ = write!(
        out,
        "\nTokens are tj's estimate, not a tokenizer's count (about 3.8 characters per token,\n\
         0.75 per CJK character); avoided = raw - rendition. See README \"Statistics\".\n"
    );
    out
}

/// What `tj stats` says when no run counts: none recorded, none readable, or none that
/// passed the filters.
fn empty_message(summary: &Summary, view: &View<'_>, ledger: &str) -> String {
    if summary.recorded > 0 {
        let filters = filters(view).unwrap_or_default();
        return format!(
            "no runs match ({filters}) among {} recorded in {ledger}",
            grouped(summary.recorded)
        );
    }
    if summary.skipped > 0 {
        return format!("no readable runs in {ledger} (every line was skipped)");
    }
    format!(
        "no runs recorded yet in {ledger}; tj records a line for every `tj reduce` and every `tj run` that gives an agent a rendition"
    )
}

/// `since 2026-11-30 00:00 UTC, session abc`, or `None` without filters.
fn filters(view: &View<'_>) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(Since(secs)) = view.since {
        let minutes = secs % 86_400 / 60;
        parts.push(format!("since {} {:02}:{:02} UTC", date_of(secs), minutes / 60, minutes % 60));
    }
    if let Some(session) = view.session {
        parts.push(format!("session {}", diag::escape(session)));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Rows with their keys as printed: escaped (they come from the ledger, which any process of
/// the user's could have written), borrowed when there is nothing to escape.
fn keyed(rows: &[Row<String>]) -> Vec<(Cow<'_, str>, &Totals)> {
    rows.iter().map(|row| (diag::escape(&row.key), &row.totals)).collect()
}

/// Day rows keyed by their date.
fn dated(rows: &[Row<u64>]) -> Vec<(Cow<'static, str>, &Totals)> {
    rows.iter()
        .map(|row| (Cow::Owned(date_of(row.key.saturating_mul(86_400))), &row.totals))
        .collect()
}

/// One table: a header, the first `view.top` rows, and a line counting the rest. Bars are
/// scaled to the largest avoided count shown.
fn table(out: &mut String, title: &str, rows: &[(Cow<'_, str>, &Totals)], view: &View<'_>) {
    let shown = if view.top == 0 { rows.len() } else { rows.len().min(view.top) };
    let _ = writeln!(
        out,
        "{:<KEY_WIDTH$}  {:>7}  {:>8}  {:>9}  {:>9}  avoided (estimate)",
        format!("by {title}"),
        "runs",
        "lossless",
        "raw",
        "rendition"
    );
    let max = rows[..shown].iter().map(|(_, t)| t.avoided_tokens()).max().unwrap_or(0);
    for (key, t) in &rows[..shown] {
        let _ = write!(
            out,
            "{:<KEY_WIDTH$}  {:>7}  {:>8}  {:>9}  {:>9}  {:>9}",
            cut(key, KEY_WIDTH),
            grouped(t.runs),
            percent(t.lossless, t.reduced),
            compact(t.raw_tokens),
            compact(t.rendition_tokens),
            compact(t.avoided_tokens())
        );
        if view.bars {
            let _ = write!(out, " {}", bar(t.avoided_tokens(), max, BAR_WIDTH));
        }
        out.push('\n');
    }
    let rest = rows.len() - shown;
    if rest > 0 {
        let what = if title == "day" { "earlier days" } else { "more" };
        let _ = writeln!(out, "… and {rest} {what}");
    }
}

/// `value` as a bar of Unicode blocks `width` cells long at `max`, in eighths of a cell. A
/// value above zero gets at least one eighth, so no saving is drawn as nothing.
fn bar(value: u64, max: u64, width: usize) -> String {
    const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    if max == 0 || value == 0 {
        return String::new();
    }
    let steps = u128::from(value) * (width as u128) * 8;
    let eighths = usize::try_from((steps + u128::from(max) / 2) / u128::from(max))
        .unwrap_or(usize::MAX)
        .clamp(1, width * 8);
    let mut out = "█".repeat(eighths / 8);
    if eighths % 8 > 0 {
        out.push(EIGHTHS[eighths % 8]);
    }
    out
}

/// `text` cut to `width` characters, ending in `…` when cut.
fn cut(text: &str, width: usize) -> Cow<'_, str> {
    if text.chars().count() <= width {
        return Cow::Borrowed(text);
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    Cow::Owned(out)
}

/// `1 run`, `1,234 runs`.
fn plural(n: u64, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{} {what}s", grouped(n)) }
}

/// `1234567` → `1,234,567` (`reduce::group`, for the ledger's `u64` counts).
fn grouped(n: u64) -> String {
    crate::reduce::group(usize::try_from(n).unwrap_or(usize::MAX))
}

/// A count for a table cell: exact with separators below 100,000, then `123.4k`, `12.3M`,
/// `1.2G` (rounded to the nearest tenth).
fn compact(n: u64) -> String {
    if n < 100_000 {
        return grouped(n);
    }
    let (unit, suffix) = if n < 999_950 {
        (1e3, 'k')
    } else if n < 999_950_000 {
        (1e6, 'M')
    } else {
        (1e9, 'G')
    };
    #[allow(clippy::cast_precision_loss, reason = "a rounded figure for display")]
    let scaled = n as f64 / unit;
    format!("{scaled:.1}{suffix}")
}

/// `part` as a whole percentage of `whole`, rounded down (so `100%` means all), or `-` when
/// `whole` is zero.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_owned();
    }
    format!("{}%", u128::from(part) * 100 / u128::from(whole))
}

/// The JSON document: the filters, the totals and every row of each grouping asked for.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Document<'a> {
    /// The ledger read.
    ledger: String,
    /// How tokens are estimated.
    estimator: &'static str,
    /// `--since`, in seconds since the Unix epoch.
    since: Option<u64>,
    /// `--session`.
    session: Option<&'a str>,
    /// Lines read and understood, before filtering.
    recorded: u64,
    /// Lines that could not be read.
    skipped: u64,
    /// Everything the filters let through.
    totals: TotalsDoc,
    /// Per family.
    #[serde(skip_serializing_if = "Option::is_none")]
    by_family: Option<Vec<RowDoc>>,
    /// Per rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    by_rule: Option<Vec<RowDoc>>,
    /// Per command (program and subcommand).
    #[serde(skip_serializing_if = "Option::is_none")]
    by_command: Option<Vec<RowDoc>>,
    /// Per UTC day, newest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    by_day: Option<Vec<RowDoc>>,
}

/// [`Totals`] as JSON.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TotalsDoc {
    runs: u64,
    reduced: u64,
    lossless: u64,
    /// Lossless among reduced, to four decimals; `null` when nothing was reduced.
    lossless_share: Option<f64>,
    deduped: u64,
    tokens: Amounts,
    chars: Amounts,
}

/// Raw, rendition and avoided amounts.
#[derive(Serialize)]
struct Amounts {
    raw: u64,
    rendition: u64,
    avoided: u64,
}

/// One row of a grouping as JSON.
#[derive(Serialize)]
struct RowDoc {
    key: String,
    #[serde(flatten)]
    totals: TotalsDoc,
}

impl From<&Totals> for TotalsDoc {
    fn from(t: &Totals) -> TotalsDoc {
        TotalsDoc {
            runs: t.runs,
            reduced: t.reduced,
            lossless: t.lossless,
            lossless_share: t.lossless_share().map(|share| (share * 10_000.0).round() / 10_000.0),
            deduped: t.deduped,
            tokens: Amounts {
                raw: t.raw_tokens,
                rendition: t.rendition_tokens,
                avoided: t.avoided_tokens(),
            },
            chars: Amounts {
                raw: t.raw_chars,
                rendition: t.rendition_chars,
                avoided: t.avoided_chars(),
            },
        }
    }
}

/// The JSON document of `summary`.
fn document<'a>(summary: &Summary, view: &View<'a>) -> Document<'a> {
    let rows = |group: Group, rows: &[Row<String>]| {
        view.groups.contains(&group).then(|| {
            rows.iter().map(|r| RowDoc { key: r.key.clone(), totals: (&r.totals).into() }).collect()
        })
    };
    Document {
        ledger: view.ledger.display().to_string(),
        estimator: ESTIMATOR,
        since: view.since.map(|s| s.0),
        session: view.session,
        recorded: summary.recorded,
        skipped: summary.skipped,
        totals: (&summary.totals).into(),
        by_family: rows(Group::Family, &summary.families),
        by_rule: rows(Group::Rule, &summary.rules),
        by_command: rows(Group::Command, &summary.commands),
        by_day: view.groups.contains(&Group::Day).then(|| {
            summary
                .days
                .iter()
                .map(|r| RowDoc {
                    key: date_of(r.key.saturating_mul(86_400)),
                    totals: (&r.totals).into(),
                })
                .collect()
        }),
    }
}

/// CSV: a header, a `total` row, then one row per key of each grouping asked for, in the
/// text's order. Keys are escaped as in the text (no control character reaches a terminal
/// through `tj stats --format csv`) and quoted as RFC 4180 says.
fn csv(summary: &Summary, groups: &[Group]) -> String {
    let mut out = String::from(
        "group,key,runs,reduced,lossless,deduped,raw_tokens,rendition_tokens,\
         avoided_tokens_estimate,raw_chars,rendition_chars,avoided_chars\n",
    );
    csv_row(&mut out, "total", "", &summary.totals);
    for &group in groups {
        let rows = match group {
            Group::Family => &summary.families,
            Group::Rule => &summary.rules,
            Group::Command => &summary.commands,
            Group::Day => {
                for row in &summary.days {
                    csv_row(&mut out, "day", &date_of(row.key.saturating_mul(86_400)), &row.totals);
                }
                continue;
            }
        };
        for row in rows {
            csv_row(&mut out, group.name(), &diag::escape(&row.key), &row.totals);
        }
    }
    out
}

/// Appends one CSV row.
fn csv_row(out: &mut String, group: &str, key: &str, t: &Totals) {
    let _ = writeln!(
        out,
        "{group},{},{},{},{},{},{},{},{},{},{},{}",
        csv_field(key),
        t.runs,
        t.reduced,
        t.lossless,
        t.deduped,
        t.raw_tokens,
        t.rendition_tokens,
        t.avoided_tokens(),
        t.raw_chars,
        t.rendition_chars,
        t.avoided_chars()
    );
}

/// `field` quoted when it holds a comma, a quote, a line break or surrounding spaces, with
/// each quote doubled (RFC 4180).
fn csv_field(field: &str) -> Cow<'_, str> {
    let plain =
        !field.contains([',', '"', '\n', '\r']) && !field.starts_with(' ') && !field.ends_with(' ');
    if plain {
        Cow::Borrowed(field)
    } else {
        Cow::Owned(format!("\"{}\"", field.replace('"', "\"\"")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_reads_dates_and_ages() {
        let now = 1_764_633_600; // 2025-12-02T00:00:00Z
        assert_eq!(parse_since_at("2025-12-01", now).unwrap(), Since(now - 86_400));
        assert_eq!(parse_since_at("1970-01-01", now).unwrap(), Since(0));
        assert_eq!(parse_since_at("90m", now).unwrap(), Since(now - 5_400));
        assert_eq!(parse_since_at("12h", now).unwrap(), Since(now - 43_200));
        assert_eq!(parse_since_at("7d", now).unwrap(), Since(now - 604_800));
        assert_eq!(parse_since_at("2w", now).unwrap(), Since(now - 1_209_600));
        for bad in ["", "d", "7", "7y", "-7d", "2025-13-01", "2025-1-1", "yesterday"] {
            assert!(parse_since_at(bad, now).is_err(), "{bad}");
        }
    }

    #[test]
    fn dates_round_trip() {
        for secs in [0, 86_399, 86_400, 951_782_400, 1_764_633_600, 4_102_444_800] {
            let date = date_of(secs);
            assert_eq!(days_from_date(&date).unwrap(), secs / 86_400, "{date}");
        }
        assert_eq!(date_of(1_764_633_600), "2025-12-02");
        assert_eq!(date_of(951_782_400), "2000-02-29");
    }

    /// A summary of `n` commands, each avoiding a different amount.
    fn summary(n: u64) -> Summary {
        let ledger: String = (1..=n)
            .map(|i| {
                let line = serde_json::json!({
                    "time": i * 86_400, "command": format!("tool{i} run --flag"),
                    "rule": format!("fam{}/r{i},\"q\"", i % 3), "tokens": [i * 1000, i * 10],
                    "chars": [i * 4000, i * 40], "reduced": true, "lossless": i % 2 == 0,
                });
                format!("{line}\n")
            })
            .collect();
        crate::stats::aggregate(ledger.as_bytes(), &Filter::default()).unwrap()
    }

    fn view(bars: bool, top: usize) -> View<'static> {
        View {
            ledger: Path::new("/data/ledger.jsonl"),
            since: None,
            session: None,
            groups: &Group::ALL,
            top,
            bars,
        }
    }

    const BLOCKS: &[char] = &['█', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

    #[test]
    fn bars_only_when_asked_and_lines_fit_in_100_columns() {
        let s = summary(15);
        let plain = text(&s, &view(false, 10));
        let barred = text(&s, &view(true, 10));
        assert!(!plain.contains(BLOCKS), "{plain}");
        assert!(barred.contains('█'), "{barred}");
        for line in barred.lines() {
            assert!(line.chars().count() < 100, "{line}");
        }
        // Without bars, the text is the same but for them.
        let stripped: String = barred
            .lines()
            .map(|l| l.trim_end_matches(|c| BLOCKS.contains(&c)).trim_end())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(stripped, plain.trim_end());
        // The biggest saver gets the full bar.
        assert!(barred.contains(&"█".repeat(BAR_WIDTH)), "{barred}");
    }

    #[test]
    fn tables_show_the_top_rows_and_count_the_rest() {
        let s = summary(15);
        let out = text(&s, &view(false, 10));
        assert!(out.contains("… and 5 more"), "{out}");
        assert!(out.contains("… and 5 earlier days"), "{out}");
        assert!(out.contains("avoided (estimate)"), "{out}");
        let commands = out.split("by command").nth(1).unwrap();
        let first = commands.lines().nth(1).unwrap();
        assert!(first.starts_with("tool15 run"), "{first}");
        let all = text(&s, &view(false, 0));
        assert!(!all.contains("… and"), "{all}");
        // Header: 15 runs; raw = 1000 × (1 + … + 15) = 120,000; rendition 1,200.
        assert!(all.starts_with("tj stats: 15 runs in /data/ledger.jsonl\n"), "{all}");
        assert!(all.contains("118,800   tokens, 99% of raw"), "{all}");
    }

    #[test]
    fn bars_are_proportional_in_eighths() {
        assert_eq!(bar(0, 10, 20), "");
        assert_eq!(bar(5, 0, 20), "");
        assert_eq!(bar(10, 10, 20), "█".repeat(20));
        assert_eq!(bar(5, 10, 20), "█".repeat(10));
        assert_eq!(bar(1, 160, 20), "▏");
        assert_eq!(bar(1, 1_000_000, 20), "▏"); // something saved is never drawn as nothing
        assert_eq!(bar(3, 16, 2), "▍"); // 3/16 of two cells' 16 eighths
        assert_eq!(bar(13, 16, 2), "█▋");
        assert_eq!(bar(u64::MAX, u64::MAX, 20), "█".repeat(20));
    }

    #[test]
    fn numbers_read_easily() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(12_345_678), "12,345,678");
        assert_eq!(compact(99_999), "99,999");
        assert_eq!(compact(123_456), "123.5k");
        assert_eq!(compact(999_949), "999.9k");
        assert_eq!(compact(999_950), "1.0M");
        assert_eq!(compact(12_345_678), "12.3M");
        assert_eq!(compact(4_000_000_000), "4.0G");
        assert_eq!(percent(1, 3), "33%");
        assert_eq!(percent(999, 1000), "99%");
        assert_eq!(percent(5, 0), "-");
        assert_eq!(plural(1, "run"), "1 run");
        assert_eq!(plural(1_000, "run"), "1,000 runs");
    }

    #[test]
    fn csv_fields_are_quoted_when_they_must_be() {
        assert_eq!(csv_field("cargo test"), "cargo test");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field(" x"), "\" x\"");
        let out = csv(&summary(2), &Group::ALL);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1 + 1 + 2 * 4, "{out}");
        assert!(out.contains("\ncommand,tool2 run,1,1,1,0,2000,20,1980,8000,80,7920\n"), "{out}");
        assert!(out.contains("\nrule,\"fam2/r2,\"\"q\"\"\",1,1,1,0,"), "{out}");
    }

    #[test]
    fn empty_ledgers_say_why() {
        let none = text(&Summary::default(), &view(false, 10));
        assert!(none.starts_with("no runs recorded yet in /data/ledger.jsonl;"), "{none}");
        let filtered = Summary { recorded: 3, ..Summary::default() };
        let v =
            View { since: Some(Since(86_400 + 90 * 60)), session: Some("s1"), ..view(false, 10) };
        let out = text(&filtered, &v);
        assert_eq!(
            out,
            "no runs match (since 1970-01-02 01:30 UTC, session s1) among 3 recorded in /data/ledger.jsonl"
        );
        let doc = serde_json::to_value(document(&Summary::default(), &view(false, 10))).unwrap();
        assert_eq!(doc["totals"]["runs"], 0);
        assert_eq!(doc["byFamily"], serde_json::json!([]));
    }
}
