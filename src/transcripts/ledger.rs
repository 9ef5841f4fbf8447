//! tj's ledger (`<data dir>/ledger.jsonl`, one line per run, see `store::LedgerEntry`), read
//! for what `tj discover` ranks, and joined with the transcripts' shell calls: a call that
//! tj ran carries no mark when tj passed its output on unchanged, but the ledger has it.
//!
//! The ledger is read here with its own small, lenient reading rather than through the
//! store's type: a line written by an older or newer tj, or damaged, costs that line.

use std::io;
use std::path::Path;

use serde::Deserialize;

use super::lenient::{Num, Pair, Text};
use super::{Lines, Session, Via};

/// One run tj recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Run {
    /// Seconds since the Unix epoch, when it was recorded (the run had ended).
    pub time: u64,
    /// The command as rules saw it (program and arguments, wrappers stripped).
    pub command: String,
    /// The rule selected.
    pub rule: String,
    /// Estimated tokens of the original output.
    pub raw_tokens: u64,
    /// Estimated tokens of what the agent was given.
    pub tokens: u64,
}

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(default)]
    time: Num,
    #[serde(default, borrow)]
    command: Text<'a>,
    #[serde(default, borrow)]
    rule: Text<'a>,
    #[serde(default)]
    tokens: Pair,
}

/// The runs in the ledger at `path`, in the order written, and how many lines were
/// skipped. A ledger that does not exist holds no runs. Never read through a symbolic
/// link: the ledger is tj's own file.
pub fn read(path: &Path, max_line: usize) -> io::Result<(Vec<Run>, usize)> {
    let file = match crate::fsx::open_read(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(err) => return Err(err),
    };
    let mut lines = Lines::new(file, max_line);
    let mut runs = Vec::new();
    let mut bad = 0;
    while let Some(bytes) = lines.next_line()? {
        let Ok(entry) = serde_json::from_slice::<Entry<'_>>(bytes) else {
            bad += 1;
            continue;
        };
        let (Some(time), Some(command)) = (entry.time.0, entry.command.get()) else {
            bad += 1;
            continue;
        };
        runs.push(Run {
            time,
            command: command.to_owned(),
            rule: entry.rule.get().unwrap_or_default().to_owned(),
            raw_tokens: entry.tokens.0.unwrap_or(0),
            tokens: entry.tokens.1.unwrap_or(0),
        });
    }
    Ok((runs, lines.skipped + bad))
}

/// Seconds of slack around a call's time window: the ledger's clock has whole seconds, and
/// a harness may stamp its record a moment before or after the command ran.
pub const SLACK_SECS: u64 = 2;

/// Marks each shell call not yet known to have gone through tj ([`Via::No`]) as
/// [`Via::Ledger`] when a run of the ledger matches it: recorded between the call and its
/// result (give or take [`SLACK_SECS`]), with a command found in the call's line at word
/// boundaries (`cargo test` in `cd x && cargo test 2>&1`). Each run matches one call at
/// most, the earliest call first.
pub fn join(sessions: &mut [Session], runs: &[Run]) {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| (runs[i].time, i));
    let mut used = vec![false; runs.len()];
    let mut calls: Vec<(u64, usize, usize)> = Vec::new();
    for (s, session) in sessions.iter().enumerate() {
        for (c, call) in session.shell.iter().enumerate() {
            if let (Via::No, Some(time)) = (call.via, call.time) {
                calls.push((time, s, c));
            }
        }
    }
    calls.sort_unstable();
    for (time, s, c) in calls {
        let call = &mut sessions[s].shell[c];
        let lo = (time / 1000).saturating_sub(SLACK_SECS);
        let hi = call.done.unwrap_or(time).div_ceil(1000) + SLACK_SECS;
        let line = call.command.split_whitespace().collect::<Vec<_>>().join(" ");
        let start = order.partition_point(|&i| runs[i].time < lo);
        for &i in order[start..].iter().take_while(|&&i| runs[i].time <= hi) {
            let run = &runs[i];
            if !used[i]
                && !run.command.is_empty()
                && crate::rules::select::includes_at_word_boundary(&line, &run.command)
            {
                used[i] = true;
                call.via = Via::Ledger;
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::{Harness, ShellCall};

    fn session(calls: &[(&str, u64, u64)]) -> Session {
        let mut s = Session::new(Harness::ClaudeCode, "s".into());
        s.shell = calls
            .iter()
            .map(|&(command, time, done)| ShellCall {
                command: command.into(),
                time: Some(time),
                done: Some(done),
                ..ShellCall::default()
            })
            .collect();
        s
    }

    #[test]
    fn a_run_inside_the_window_marks_the_call_once() {
        let mut sessions = [session(&[
            ("cd /x && cargo test 2>&1", 100_000, 130_500),
            ("cargo test", 200_000, 201_000),
            ("cargo testing", 300_000, 301_000),
        ])];
        let run =
            |time: u64, command: &str| Run { time, command: command.into(), ..Run::default() };
        let runs = [run(131, "cargo test"), run(301, "cargo test"), run(500, "cargo test")];
        join(&mut sessions, &runs);
        let via: Vec<Via> = sessions[0].shell.iter().map(|c| c.via).collect();
        assert_eq!(via, [Via::Ledger, Via::No, Via::No]);
    }

    #[test]
    fn a_ledger_line_of_another_shape_costs_that_line() {
        let dir = std::env::temp_dir().join(format!("tj-ledger-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(
            &mut file,
            b"{\"time\":5,\"id\":\"a\",\"command\":\"make\",\"rule\":\"build/make\",\"tokens\":[900,100]}\n[1]\n{\"time\":\"x\",\"command\":\"ls\"}\n{\"time\":6,\"command\":\"ls\",\"tokens\":\"many\"}\n",
        )
        .unwrap();
        let (runs, skipped) = read(&path, 1 << 20).unwrap();
        assert_eq!(skipped, 2);
        assert_eq!(runs.len(), 2);
        assert_eq!(
            (runs[0].raw_tokens, runs[0].tokens, runs[0].rule.as_str()),
            (900, 100, "build/make")
        );
        assert_eq!((runs[1].raw_tokens, runs[1].tokens), (0, 0));
        assert_eq!(read(&dir.join("none.jsonl"), 1 << 20).unwrap(), (Vec::new(), 0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
