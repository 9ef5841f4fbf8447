//! Exact repeats (issue 12): identical consecutive lines, and identical consecutive blocks of
//! up to [`MAX_PERIOD`] lines, written once with their count. Lossless: unlike the
//! `dedupeAdjacent` transform, which drops repeats silently, the count says how many copies
//! there were and [`decode`] gives every one of them back.
//!
//! This module owns the encoding and its decoder. It does not decide when the route is tried
//! or whether its result is adopted: the pipeline in `reduce` and the gate do.
//!
//! # Format
//!
//! ```text
//! [tj] repeats folded: a line ending "  [× N]" stands for N copies of itself; "[tj] the K lines above × N" for N copies of those K lines
//! PING 10.0.0.1 56(84) bytes of data.
//! Request timeout for icmp_seq  [× 37]
//! retrying in 5s
//! connect: connection refused
//! [tj] the 2 lines above × 12
//! done
//! ```
//!
//! - **Line 1** is the legend; it starts with [`LEGEND`].
//! - **A line ending in `  [× N]`** (two spaces, `N` ≥ 1 in decimal without a leading zero)
//!   is the text before the suffix, `N` times in a row.
//! - **`[tj] the K lines above × N`** (`K` ≥ 2, `N` ≥ 2) follows the first copy of a block
//!   of `K` lines and stands for `N` copies of it in all. The block's lines are written one
//!   per line, never folded themselves, so "the K lines above" are the K lines one sees.
//! - **Any other line** is itself.
//!
//! An original line that would read as one of the two forms (it ends like a count, or it
//! is a block marker) is written with the count `  [× 1]` appended, which the decoder strips
//! before looking at anything else. Measured with `tokens::estimate`, the suffix costs
//! about 2 tokens and a block marker about 8, so a line is folded only when its copies cost
//! more than that (a lone pair of short lines stays as it is).

use std::fmt::Write as _;

/// How every encoding starts: the pipeline recognises this route's output by it.
pub const LEGEND: &str = "[tj] repeats folded";

/// The whole legend line.
const LEGEND_LINE: &str = "[tj] repeats folded: a line ending \"  [× N]\" stands for N copies \
    of itself; \"[tj] the K lines above × N\" for N copies of those K lines";

/// The longest block, in lines, looked for: a retry stanza, a request and its response, a
/// progress frame of a few lines.
pub const MAX_PERIOD: usize = 8;

/// What separates a line's text from its count.
const COUNT_OPEN: &str = "  [× ";
/// The block marker's parts around `K` and `N`.
const BLOCK_OPEN: &str = "[tj] the ";
const BLOCK_MID: &str = " lines above × ";

/// The largest encoded/original byte ratio, in percent, worth returning: the gate asks for
/// 72 % by default, so an encoding that keeps more than four fifths can never be adopted.
const MAX_KEEP_PERCENT: usize = 80;

pub use super::DecodeError;

/// The name this route's decode errors give.
const ROUTE: &str = "repeats";

/// `lines` with their repeats folded, or None when nothing repeats enough to pay.
///
/// The result decodes back to `lines` exactly; `encode` checks this itself and returns
/// None on a mismatch.
///
/// ```
/// use tj::reduce::shape::repeats;
/// let lines = vec!["connection reset by peer"; 40];
/// let text = repeats::encode(&lines).unwrap();
/// assert!(text.ends_with("\nconnection reset by peer  [× 40]"));
/// assert_eq!(repeats::decode(&text).unwrap(), lines);
/// ```
pub fn encode(lines: &[&str]) -> Option<String> {
    let original: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut out = String::with_capacity(original / 2 + LEGEND_LINE.len());
    out.push_str(LEGEND_LINE);
    let mut folded = false;
    let mut i = 0;
    while i < lines.len() {
        match best_run(lines, i) {
            Some(run) => {
                write_run(&mut out, &lines[i..i + run.period], run.reps);
                i += run.period * run.reps;
                folded = true;
            }
            None => {
                out.push('\n');
                push_line(&mut out, lines[i]);
                i += 1;
            }
        }
    }
    if !folded || out.len() * 100 > original * MAX_KEEP_PERCENT {
        return None;
    }
    // Lossless: the encoding is returned only if it gives every line back.
    let back = decode(&out).ok()?;
    (back.len() == lines.len() && back.iter().zip(lines).all(|(a, b)| a == b)).then_some(out)
}

/// The lines back from exactly what [`encode`] wrote, its legend line included.
pub fn decode(text: &str) -> Result<Vec<String>, DecodeError> {
    let mut rows = text.split('\n');
    match rows.next() {
        Some(first) if first.starts_with(LEGEND) => {}
        _ => return Err(DecodeError { route: ROUTE, line: 1, what: "the legend line is missing" }),
    }
    let mut out: Vec<String> = Vec::new();
    for (n, line) in rows.enumerate() {
        let n = n + 2;
        if let Some((content, count)) = split_count(line) {
            out.extend(std::iter::repeat_n(content, count).map(str::to_owned));
        } else if let Some((k, count)) = block_marker(line) {
            let from = out.len().checked_sub(k).ok_or(DecodeError {
                route: ROUTE,
                line: n,
                what: "the block marker names more lines than there are above it",
            })?;
            for _ in 1..count {
                out.extend_from_within(from..from + k);
            }
        } else {
            out.push(line.to_owned());
        }
    }
    Ok(out)
}

/// A fold starting at some line: `reps` copies of a block of `period` lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    period: usize,
    reps: usize,
    /// Bytes the fold saves over writing every copy.
    saving: usize,
}

/// The fold at `lines[i]` that saves the most bytes, the shortest block on a tie, or None
/// when no fold saves anything.
///
/// Scanning a period stops at the first copy that differs, so a line costs at most
/// [`MAX_PERIOD`] short comparisons when nothing repeats, and a long run is scanned about
/// [`MAX_PERIOD`] times before `encode` jumps past it.
fn best_run(lines: &[&str], i: usize) -> Option<Run> {
    let mut best: Option<Run> = None;
    for period in 1..=MAX_PERIOD {
        if i + 2 * period > lines.len() {
            break;
        }
        let block = &lines[i..i + period];
        let mut reps = 1;
        while let Some(next) = lines.get(i + reps * period..i + (reps + 1) * period) {
            if next != block {
                break;
            }
            reps += 1;
        }
        if reps < 2 {
            continue;
        }
        let block_bytes: usize = block.iter().map(|l| l.len() + 1).sum();
        let cost = marker_len(period, reps) + usize::from(period > 1);
        let Some(saving) = ((reps - 1) * block_bytes).checked_sub(cost) else { continue };
        if saving > 0 && best.is_none_or(|b| saving > b.saving) {
            best = Some(Run { period, reps, saving });
        }
    }
    best
}

/// Bytes the count suffix (one line) or the block marker line (a block) takes.
fn marker_len(period: usize, reps: usize) -> usize {
    let digits = |n: usize| n.to_string().len();
    if period == 1 {
        COUNT_OPEN.len() + digits(reps) + 1
    } else {
        BLOCK_OPEN.len() + digits(period) + BLOCK_MID.len() + digits(reps)
    }
}

/// Writes `reps` copies of `block`, each line after a newline.
fn write_run(out: &mut String, block: &[&str], reps: usize) {
    if let [line] = block {
        // The suffix the decoder strips first, so a line that looks like an encoding needs
        // no escape of its own here.
        let _ = write!(out, "\n{line}{COUNT_OPEN}{reps}]");
        return;
    }
    for line in block {
        out.push('\n');
        push_line(out, line);
    }
    let _ = write!(out, "\n{BLOCK_OPEN}{}{BLOCK_MID}{reps}", block.len());
}

/// Writes one original line that stands for itself, escaped with `  [× 1]` when the
/// decoder would otherwise read it as a count or a block marker.
fn push_line(out: &mut String, line: &str) {
    out.push_str(line);
    if split_count(line).is_some() || block_marker(line).is_some() {
        let _ = write!(out, "{COUNT_OPEN}1]");
    }
}

/// `line` as its text and count when it ends in `  [× N]`.
fn split_count(line: &str) -> Option<(&str, usize)> {
    let (content, digits) = line.strip_suffix(']')?.rsplit_once(COUNT_OPEN)?;
    Some((content, parse_count(digits)?))
}

/// `line` as its block length and count when it is a block marker.
fn block_marker(line: &str) -> Option<(usize, usize)> {
    let (k, n) = line.strip_prefix(BLOCK_OPEN)?.split_once(BLOCK_MID)?;
    let (k, n) = (parse_count(k)?, parse_count(n)?);
    (k >= 2 && n >= 2).then_some((k, n))
}

/// A positive decimal without sign or leading zero, the only form `encode` writes.
fn parse_count(digits: &str) -> Option<usize> {
    let ok = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0');
    ok.then(|| digits.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::tokens;

    fn round_trip(lines: &[&str]) -> String {
        let text = encode(lines).expect("the input pays");
        assert_eq!(decode(&text).unwrap(), lines, "encoded:\n{text}");
        text
    }

    #[test]
    fn folds_identical_lines_with_their_count() {
        let lines = vec!["hello"; 500];
        let text = round_trip(&lines);
        assert_eq!(text.lines().nth(1), Some("hello  [× 500]"));
        assert_eq!(text.lines().count(), 2);
    }

    #[test]
    fn folds_a_retry_block_and_keeps_what_differs() {
        let mut lines = vec!["starting worker"];
        for _ in 0..12 {
            lines.extend(["connecting to db:5432", "error: connection refused", "retrying in 5s"]);
        }
        lines.push("giving up after 12 attempts");
        let text = round_trip(&lines);
        let body: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            body,
            [
                "starting worker",
                "connecting to db:5432",
                "error: connection refused",
                "retrying in 5s",
                "[tj] the 3 lines above × 12",
                "giving up after 12 attempts",
            ]
        );
    }

    #[test]
    fn ping_timeouts_fold_between_distinct_replies() {
        let mut lines = vec!["PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data."];
        lines.extend(std::iter::repeat_n("Request timeout for icmp_seq", 40));
        lines.push("64 bytes from 10.0.0.1: icmp_seq=41 ttl=64 time=0.045 ms");
        lines.extend(std::iter::repeat_n("Request timeout for icmp_seq", 30));
        let text = round_trip(&lines);
        assert!(text.contains("\nRequest timeout for icmp_seq  [× 40]\n64 bytes"));
        assert!(text.ends_with("\nRequest timeout for icmp_seq  [× 30]"));
    }

    #[test]
    fn prefers_the_shortest_block_that_saves_most() {
        // Period 1 and period 2 both cover the run; period 1 saves more.
        let lines = vec!["progress 50%"; 64];
        let text = round_trip(&lines);
        assert!(text.ends_with("\nprogress 50%  [× 64]"));
        // An alternating pair is a block of 2, not two runs of 1.
        let lines: Vec<&str> = ["tick", "tock"].repeat(50);
        let text = round_trip(&lines);
        assert!(text.ends_with("\ntick\ntock\n[tj] the 2 lines above × 50"), "{text}");
    }

    #[test]
    fn lines_that_look_like_the_encoding_are_escaped() {
        let tricky = [
            "x  [× 3]",
            "[tj] the 2 lines above × 4",
            "  [× 1]",
            "[tj] repeats folded: not a legend here",
        ];
        let mut lines: Vec<&str> = tricky.to_vec();
        lines.extend(std::iter::repeat_n("the same line again and again", 40));
        lines.extend(tricky);
        lines.extend(std::iter::repeat_n("x  [× 3]", 20));
        let text = round_trip(&lines);
        assert!(text.contains("\nx  [× 3]  [× 1]\n"));
        assert!(text.contains("\n[tj] the 2 lines above × 4  [× 1]\n"));
        assert!(text.ends_with("\nx  [× 3]  [× 20]"));
        // Not an encoding form, so not escaped.
        assert!(text.contains("\n[tj] repeats folded: not a legend here\n"));
    }

    #[test]
    fn blank_tab_and_unicode_lines_fold_too() {
        let mut lines = vec![""; 30];
        lines.extend(["\tindented", "漢字の行", "\tindented", "漢字の行"].repeat(20));
        let text = round_trip(&lines);
        assert!(text.contains("\n  [× 30]\n"));
        assert!(text.ends_with("[tj] the 2 lines above × 40"));
    }

    #[test]
    fn declines_what_does_not_pay() {
        assert_eq!(encode(&[]), None);
        assert_eq!(encode(&["one line"]), None);
        assert_eq!(encode(&["a", "a"]), None, "the suffix costs more than the copy");
        let distinct: Vec<String> = (0..200).map(|i| format!("line {i}")).collect();
        let refs: Vec<&str> = distinct.iter().map(String::as_str).collect();
        assert_eq!(encode(&refs), None);
        // A few repeats in a long distinct listing save too little.
        let mut mostly: Vec<&str> = refs.clone();
        mostly.extend(["dup"; 5]);
        assert_eq!(encode(&mostly), None);
    }

    #[test]
    fn yes_hello_saves_almost_all_tokens() {
        let lines = vec!["hello"; 500];
        let original = lines.join("\n");
        let text = round_trip(&lines);
        assert!(tokens::estimate(&text) * 10 < tokens::estimate(&original));
    }

    #[test]
    fn decode_rejects_what_encode_never_writes() {
        assert_eq!(decode("no legend").unwrap_err().line, 1);
        let err = decode(&format!("{LEGEND_LINE}\nonly one\n[tj] the 2 lines above × 3"));
        assert_eq!(err.unwrap_err().line, 3);
        // Counts with a leading zero, zero or no digits are text, not counts.
        for line in ["a  [× 0]", "a  [× 03]", "a  [× ]", "a  [× -1]", "[tj] the 1 lines above × 3"]
        {
            let back = decode(&format!("{LEGEND_LINE}\n{line}")).unwrap();
            assert_eq!(back, [line]);
        }
    }

    #[test]
    fn encoding_is_deterministic() {
        let lines: Vec<&str> = ["a", "b", "b", "b", "c", "d", "c", "d", "c", "d"].repeat(30);
        assert_eq!(encode(&lines), encode(&lines));
    }
}
