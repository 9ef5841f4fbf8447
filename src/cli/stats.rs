//! `tj stats`: what tj saved, from its ledger; with `--transcripts`, what the harness billed.

use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::env::Env;
use crate::exit::Status;

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
    // Howard Hinnant's days_from_civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    u64::try_from(era * 146_097 + doe - 719_468).ok()
}

#[allow(dead_code, reason = "the day column of `tj stats`, being built")]
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
    bail!("tj stats: not built yet")
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
}
