//! `tj expand`: print a stored original, whole or in part.

use anyhow::{Result, bail};

use crate::emit;
use crate::env::Env;
use crate::exit::Status;
use crate::reduce::split_lines;
use crate::store::Store;

/// Print a stored original
///
/// ID is the artifact id a rendition names (a unique prefix is enough). By default the
/// output is rendered as the terminal showed it, ANSI stripped, and line numbers match the
/// `(L120–480)` ranges in omission markers.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The artifact id
    id: String,

    /// The exact bytes the command wrote
    #[arg(long, conflicts_with = "lines")]
    raw: bool,

    /// Only lines A to B (1-based, inclusive), e.g. `120:480`, `120:` or `:40`
    #[arg(long, value_name = "A:B")]
    lines: Option<String>,

    /// Only lines matching this regex, each prefixed with its line number
    #[arg(long, value_name = "RE", conflicts_with = "raw")]
    grep: Option<String>,

    /// The rendition the agent was given, not the original
    #[arg(long, conflicts_with_all = ["raw", "lines", "grep"])]
    reduced: bool,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let store = Store::new(env)?;
    if args.reduced {
        return match store.read_rendition(&args.id) {
            Ok(text) => emit::stdout(&text).map(|()| Status::Ok),
            Err(err) => {
                crate::diag::error(&err);
                Ok(Status::Failure)
            }
        };
    }
    let bytes = match store.read(&args.id) {
        Ok(bytes) => bytes,
        Err(err) => {
            crate::diag::error(&err);
            return Ok(Status::Failure);
        }
    };
    let full_id = store.resolve(&args.id)?;
    let tail = store.read_tail(&full_id);
    if args.raw {
        emit::stdout_bytes(&bytes)?;
        if let Some(tail) = &tail {
            crate::diag::warn(&format!(
                "the output passed the disk cap: this is its head; the last {} bytes are in `{}`",
                tail.len(),
                store.spill_path(&full_id).with_extension("tail").display()
            ));
        }
        return Ok(Status::Ok);
    }
    if tail.is_some() {
        crate::diag::warn(
            "the output passed the disk cap: the middle was not kept; showing the head",
        );
    }
    // Rendered as the rendition was, at the PTY's width, so line numbers agree.
    let cols = store.previous(&full_id).and_then(|meta| meta.cols);
    let rendered = crate::reduce::screen_width(&bytes, cols);
    let lines = split_lines(&rendered);
    let (from, to) = match &args.lines {
        Some(range) => parse_range(range, lines.len())?,
        None => (1, lines.len()),
    };
    if from > to {
        return Ok(Status::Ok);
    }
    if let Some(pattern) = &args.grep {
        let re = regex::Regex::new(pattern)
            .map_err(|e| anyhow::anyhow!("--grep: invalid regex: {e}"))?;
        let mut out = String::new();
        for (n, line) in lines.iter().enumerate().take(to).skip(from - 1) {
            if re.is_match(line) {
                out.push_str(&format!("{}:{line}\n", n + 1));
            }
        }
        if out.is_empty() {
            return Ok(Status::Failure);
        }
        emit::stdout(out.trim_end())?;
        return Ok(Status::Ok);
    }
    emit::stdout(&lines[from - 1..to].join("\n"))?;
    Ok(Status::Ok)
}

/// Parses `A:B` into a 1-based inclusive range clamped to `len` lines.
fn parse_range(text: &str, len: usize) -> Result<(usize, usize)> {
    let Some((a, b)) = text.split_once(':') else {
        bail!("--lines takes A:B (e.g. 120:480), got `{text}`");
    };
    let num = |s: &str, default: usize| -> Result<usize> {
        if s.is_empty() {
            return Ok(default);
        }
        s.trim()
            .parse::<usize>()
            .map_err(|_| anyhow::anyhow!("--lines: `{s}` is not a line number"))
    };
    let from = num(a, 1)?.max(1);
    let to = num(b, len)?.min(len);
    Ok((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_clamp() {
        assert_eq!(parse_range("120:480", 1000).unwrap(), (120, 480));
        assert_eq!(parse_range(":40", 1000).unwrap(), (1, 40));
        assert_eq!(parse_range("990:", 1000).unwrap(), (990, 1000));
        assert_eq!(parse_range("0:5000", 10).unwrap(), (1, 10));
        assert!(parse_range("12", 10).is_err());
        assert!(parse_range("a:b", 10).is_err());
    }
}
