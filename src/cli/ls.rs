//! `tj ls`: the stored originals, newest first.
//!
//! Everything listed comes from metadata files anyone with access to the store could have
//! written, so every field is printed through [`diag::escape`]: a stored command holding
//! escape sequences is shown, never played on the terminal.

use std::fmt::Write as _;

use anyhow::Result;

use crate::env::Env;
use crate::exit::Status;
use crate::store::{Store, now_secs};
use crate::{diag, emit};

/// List recent artifacts: id, age, command, exit, raw → reduced
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Show at most N artifacts
    #[arg(long, short = 'n', value_name = "N", default_value_t = 20)]
    limit: usize,

    /// Output format
    #[arg(long, value_enum, default_value_t = emit::Format::Text)]
    format: emit::Format,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let store = Store::new(env)?;
    let (mut list, corrupt) = store.list()?;
    match corrupt {
        0 => {}
        1 => diag::warn_once("1 artifact has unreadable metadata; not listed"),
        n => diag::warn_once(&format!("{n} artifacts have unreadable metadata; not listed")),
    }
    let stored = list.len();
    list.truncate(args.limit);
    if args.format == emit::Format::Json {
        emit::json(&list)?;
        return Ok(Status::Ok);
    }
    let now = now_secs();
    let mut out = String::new();
    for meta in &list {
        let command = meta.command.clone().unwrap_or_else(|| meta.argv.join(" "));
        let exit = match (meta.exit_code, meta.signal) {
            (_, Some(sig)) => format!("sig {sig}"),
            (Some(code), None) => format!("exit {code}"),
            (None, None) => "-".to_owned(),
        };
        // A run watched live has no rendition: nobody was given one.
        let reduced = match meta.reduced_chars {
            Some(chars) => chars.to_string(),
            None if meta.watched() => "(live)".to_owned(),
            None => "-".to_owned(),
        };
        let _ = writeln!(
            out,
            "{}  {:>5}  {:<8}  {:>9} → {:<9}  {}",
            diag::escape(&meta.id),
            age(now.saturating_sub(meta.created_at)),
            exit,
            meta.bytes,
            reduced,
            truncate(&diag::escape(&command), 60)
        );
    }
    if stored == 0 {
        out = empty_store(corrupt);
    }
    emit::stdout(out.trim_end())?;
    Ok(Status::Ok)
}

/// What `tj ls` says when it lists nothing: a store whose every entry is corrupt is not an
/// empty one.
fn empty_store(corrupt: usize) -> String {
    match corrupt {
        0 => "no artifacts stored yet".to_owned(),
        1 => "no artifacts listed: 1 corrupt entry (its metadata is unreadable)".to_owned(),
        n => format!("no artifacts listed: {n} corrupt entries (their metadata is unreadable)"),
    }
}

/// `42s`, `5m`, `3h`, `2d`.
fn age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age(5), "5s");
        assert_eq!(age(125), "2m");
        assert_eq!(age(7200), "2h");
        assert_eq!(age(3 * 86400), "3d");
    }

    #[test]
    fn an_all_corrupt_store_is_not_called_empty() {
        assert_eq!(empty_store(0), "no artifacts stored yet");
        assert!(empty_store(3).contains("3 corrupt entries"), "{}", empty_store(3));
    }

    #[test]
    fn long_commands_are_cut() {
        assert_eq!(truncate("abc", 5), "abc");
        assert_eq!(truncate("abcdefgh", 5), "abcd…");
    }
}
