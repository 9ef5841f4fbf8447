//! `tj expand`: print a stored original, whole or in part.
//!
//! Lines are numbered as the rendition numbered them: the output rendered as the terminal
//! showed it (at the PTY's width), its bytes that are not UTF-8 compacted as the reducer
//! compacts them, and, past [`stream::WHOLE_MAX`] bytes, rendered in the same chunks a
//! streamed reduction used ([`stream::chunks`]). What is printed is the original's text
//! (not escaped: it is the command's own output); what tj says about it is escaped.

use std::ops::ControlFlow;

use anyhow::{Result, bail};

use crate::emit;
use crate::env::Env;
use crate::exit::Status;
use crate::reduce::{binary, stream};
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

    /// The stored bytes, exactly: what the command wrote, or, for a command run on a PTY
    /// (`tj run` without --no-pty), what the terminal received (`\r\n` line ends, colours)
    #[arg(long, conflicts_with = "lines")]
    raw: bool,

    /// The stored bytes with `\r\n` made `\n`: a PTY run's output as a pipe would have
    /// carried it (colours and other escapes stay)
    #[arg(long, conflicts_with_all = ["raw", "lines", "grep"])]
    lf: bool,

    /// Only lines A to B (1-based, inclusive), e.g. `120:480`, `120:`, `:40`, `120`, or a
    /// marker's range as printed (`L120–480`)
    #[arg(long, value_name = "A:B")]
    lines: Option<String>,

    /// Only lines matching this regex, each prefixed with its line number
    #[arg(long, value_name = "RE", conflicts_with = "raw")]
    grep: Option<String>,

    /// The rendition the agent was given, not the original
    #[arg(long, conflicts_with_all = ["raw", "lf", "lines", "grep"])]
    reduced: bool,

    /// Leave secrets in the lines printed (they are replaced by `[tj: redacted KIND]` by
    /// default, unless `"redact": false` is configured; --raw and --lf never redact)
    #[arg(long)]
    no_redact: bool,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let store = Store::new(env)?;
    if args.reduced {
        return match store.read_rendition(&args.id) {
            Ok(text) => emit::stdout(&text).map(|()| Status::Ok),
            Err(err) => {
                crate::diag::error(&no_rendition(&store, &args.id, err));
                Ok(Status::Failure)
            }
        };
    }
    // Checked before anything is read, so that a bad range or pattern costs nothing.
    let range = args.lines.as_deref().map(parse_range).transpose()?;
    let pattern = match &args.grep {
        Some(pattern) => Some(
            regex::Regex::new(pattern)
                .map_err(|e| anyhow::anyhow!("--grep: invalid regex: {e}"))?,
        ),
        None => None,
    };
    let bytes = match store.read(&args.id) {
        Ok(bytes) => bytes,
        Err(err) => {
            crate::diag::error(&err);
            return Ok(Status::Failure);
        }
    };
    let full_id = store.resolve(&args.id)?;
    let tail = store.read_tail(&full_id);
    if args.raw || args.lf {
        return print_bytes(args, &store, &full_id, &bytes, tail.as_deref());
    }
    if let Some(found) = binary::detect(&bytes) {
        bail!(
            "`{full_id}` is binary output ({}, {} bytes), not text: `tj expand {full_id} --raw > FILE` gives its bytes",
            found.kind,
            bytes.len()
        );
    }
    if tail.is_some() {
        crate::diag::warn(
            "the output passed the disk cap: the middle was not kept; showing the head",
        );
    }
    // Rendered as the rendition was, at the PTY's width, so line numbers agree.
    let cols = store.previous(&full_id).and_then(|meta| meta.cols);
    let redact = !args.no_redact && super::load_config(env).redact;
    let whole = range.unwrap_or((1, usize::MAX));
    let shown = print_lines(&bytes, cols, whole, pattern.as_ref(), redact)?;
    if let Some(total) = shown.total
        && range.is_some_and(|(from, _)| from > total.max(1))
    {
        let lines = args.lines.as_deref().unwrap_or_default();
        match total {
            0 => bail!("--lines {lines}: `{full_id}` has no lines"),
            1 => bail!("--lines {lines}: `{full_id}` has 1 line (1:1)"),
            _ => bail!("--lines {lines}: `{full_id}` has {total} lines (1–{total})"),
        }
    }
    Ok(if pattern.is_some() && shown.printed == 0 { Status::Failure } else { Status::Ok })
}

/// `--raw` / `--lf`: the stored bytes (`\r\n` turned into `\n` for `--lf`), and a warning
/// naming the tail file when the output passed the disk cap.
fn print_bytes(
    args: &Args,
    store: &Store,
    full_id: &str,
    bytes: &[u8],
    tail: Option<&[u8]>,
) -> Result<Status> {
    if args.lf {
        emit::stdout_bytes(&crlf_to_lf(bytes))?;
    } else {
        emit::stdout_bytes(bytes)?;
    }
    if let Some(tail) = tail {
        crate::diag::warn(&format!(
            "the output passed the disk cap: this is its head; the last {} bytes are in `{}`",
            tail.len(),
            store.spill_path(full_id).with_extension("tail").display()
        ));
    }
    Ok(Status::Ok)
}

/// What [`print_lines`] did.
struct Shown {
    /// Lines printed.
    printed: usize,
    /// Lines in the output, when all were seen (`None`: printing stopped at the range's end).
    total: Option<usize>,
}

/// Prints the lines numbered `from..=to` (those matching `pattern`, as `N:line`, when
/// given), in chunks so that a large output is never held twice; if `redact`, with their
/// secrets replaced (a secret split across two chunks of 64 KiB can get through).
fn print_lines(
    bytes: &[u8],
    cols: Option<u16>,
    (from, to): (usize, usize),
    pattern: Option<&regex::Regex>,
    redact: bool,
) -> Result<Shown> {
    let mut out = String::new();
    let mut printed = 0usize;
    let mut failed = None;
    let flush = |out: &str| {
        if redact && let std::borrow::Cow::Owned(redacted) = crate::redact::redact(out) {
            return emit::stdout_bytes(redacted.as_bytes());
        }
        emit::stdout_bytes(out.as_bytes())
    };
    let total = for_each_line(bytes, cols, |n, line| {
        if n > to {
            return ControlFlow::Break(());
        }
        if n < from {
            return ControlFlow::Continue(());
        }
        match pattern {
            Some(re) if !re.is_match(line) => return ControlFlow::Continue(()),
            Some(_) => out.push_str(&format!("{n}:{line}\n")),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
        printed += 1;
        if out.len() >= stream::CHUNK {
            if let Err(err) = flush(&out) {
                failed = Some(err);
                return ControlFlow::Break(());
            }
            out.clear();
        }
        ControlFlow::Continue(())
    });
    if let Some(err) = failed {
        return Err(err);
    }
    flush(&out)?;
    Ok(Shown { printed, total })
}

/// Why `id` has no rendition to print: `err` as it is, unless the run was watched live
/// (see [`crate::store::Metadata::watched`]), which is said with what to run instead.
fn no_rendition(store: &Store, id: &str, err: anyhow::Error) -> anyhow::Error {
    let watched = store.resolve(id).ok().and_then(|id| store.previous(&id)).filter(|m| m.watched());
    let Some(meta) = watched else { return err };
    let shown = meta.command.clone().unwrap_or_else(|| meta.argv.join(" "));
    anyhow::anyhow!(
        "`{id}` ran in a terminal with no agent reading (`{shown}`, watched live): tj made no rendition of it. `tj expand {id}` prints the output; `tj expand {id} --raw | {reduce}` reduces it now",
        id = meta.id,
        shown = crate::diag::escape(&shown),
        reduce = reduce_command(&meta),
    )
}

/// The `tj reduce` that makes the rendition `meta`'s run would have had: its exit code, its
/// width, and its argv word by word ([`crate::shell::paste_word`]), so that the same rule
/// is selected.
fn reduce_command(meta: &crate::store::Metadata) -> String {
    let mut line = "tj reduce".to_owned();
    if let Some(code) = meta.exit_code {
        line.push_str(&format!(" --exit-code {code}"));
    }
    if let Some(cols) = meta.cols {
        line.push_str(&format!(" --cols {cols}"));
    }
    match (&meta.command, meta.argv.is_empty()) {
        (Some(command), true) => {
            line.push_str(&format!(" --command {}", crate::shell::paste_word(command)));
        }
        _ => {
            line.push_str(" --");
            for arg in &meta.argv {
                line.push(' ');
                line.push_str(&crate::shell::paste_word(arg));
            }
        }
    }
    line
}

/// Calls `f` with each line of `bytes` and its 1-based number, numbered as the rendition
/// numbered them (see the module docs), until `f` breaks. Returns the number of lines when
/// it saw them all, `None` when `f` broke.
fn for_each_line(
    bytes: &[u8],
    cols: Option<u16>,
    mut f: impl FnMut(usize, &str) -> ControlFlow<()>,
) -> Option<usize> {
    let mut n = 0;
    if bytes.len() <= stream::WHOLE_MAX {
        let (compacted, _) = binary::compact(bytes);
        let rendered = crate::reduce::screen_width(&compacted, cols);
        for line in crate::reduce::split_lines(&rendered) {
            n += 1;
            f(n, line).is_continue().then_some(())?;
        }
        return Some(n);
    }
    for chunk in stream::chunks(bytes) {
        let (text, _) = stream::render_chunk(chunk, cols);
        for line in stream::chunk_lines(&text) {
            n += 1;
            f(n, line).is_continue().then_some(())?;
        }
    }
    Some(n)
}

/// `bytes` with every `\r\n` made `\n`.
fn crlf_to_lf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Parses a line range: `A:B`, `A–B` (the en dash markers print), `A-B`, with either end
/// left open, or one line `A`; an `L` before it (`L120–480`, copied from a marker) is
/// allowed. 1-based and inclusive; an open end is 1 or the last line.
fn parse_range(text: &str) -> Result<(usize, usize)> {
    let spec = text.trim();
    let spec = spec.strip_prefix(['L', 'l']).unwrap_or(spec);
    let (a, b) = match spec.split_once([':', '–', '-']) {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (spec, spec),
    };
    let num = |s: &str, default: usize| -> Result<usize> {
        if s.is_empty() {
            return Ok(default);
        }
        match s.parse::<usize>() {
            Ok(0) => bail!("--lines {text}: lines are numbered from 1"),
            Ok(n) => Ok(n),
            Err(_) => bail!("--lines takes A:B (e.g. 120:480 or 120–480), got `{text}`"),
        }
    };
    let from = num(a, 1)?;
    let to = num(b, usize::MAX)?;
    if from > to {
        bail!("--lines {text}: the range ends before it starts (did you mean {to}:{from}?)");
    }
    Ok((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_in_every_form_markers_and_people_write() {
        assert_eq!(parse_range("120:480").unwrap(), (120, 480));
        assert_eq!(parse_range("120–480").unwrap(), (120, 480));
        assert_eq!(parse_range("L120–480").unwrap(), (120, 480));
        assert_eq!(parse_range("120-480").unwrap(), (120, 480));
        assert_eq!(parse_range(":40").unwrap(), (1, 40));
        assert_eq!(parse_range("990:").unwrap(), (990, usize::MAX));
        assert_eq!(parse_range("12").unwrap(), (12, 12));
        assert!(parse_range("a:b").is_err());
        assert!(parse_range("0:5").unwrap_err().to_string().contains("numbered from 1"));
        let err = parse_range("1499:2").unwrap_err().to_string();
        assert!(err.contains("ends before it starts"), "{err}");
    }

    #[test]
    fn lf_keeps_lone_carriage_returns() {
        assert_eq!(crlf_to_lf(b"a\r\nb\rc\r\n\r"), b"a\nb\rc\n\r");
    }

    #[test]
    fn big_outputs_are_numbered_in_the_chunks_a_stream_uses() {
        let mut bytes = Vec::new();
        let mut n = 0;
        while bytes.len() <= stream::WHOLE_MAX {
            n += 1;
            bytes.extend_from_slice(format!("line {n}\n").as_bytes());
        }
        let mut seen = 0;
        let total = for_each_line(&bytes, None, |i, line| {
            seen += 1;
            assert_eq!(line, format!("line {i}"));
            ControlFlow::Continue(())
        });
        assert_eq!(total, Some(n));
        assert_eq!(seen, n);
    }
}
