//! Aligned tables (`ps aux`, `df -h`, `kubectl get`, `docker ps`, `helm list`, psql and
//! mysql client output, sqlite3 `-column`/`-box`, `aws … --output table`): the header and
//! the borders verbatim, the first and last rows verbatim, the middle sampled at a fixed
//! stride, and every row the table itself marks as bad always kept.
//!
//! This module owns the recognition of a table ([`detect`]), the judgement of which rows
//! the table flags ([`flagged`]) and the per-line keep decision ([`sample`]). It does not
//! own the omission markers (`window`), the evidence classifier (`evidence`) nor the
//! decision to adopt the result (`gate`). Lossy: rows between samples go; the pipeline
//! turns each dropped run into a marker naming its original lines.
//!
//! Three families are recognised:
//! - *Piped* tables: a header line with `|`/`│`/`║` separators, directly followed by a
//!   border line (`----+----`, `+----+`, `├──┼──┤`, `|---|`), then rows with as many
//!   separators as the header. Requiring the border keeps `tree` output and `a | b` logs
//!   out.
//! - *Aligned* tables: a header of at least three words, each holding a letter and none a
//!   bare number, capitalised (`NAME`, `Filesystem`, `%CPU`: the first word and two thirds
//!   of them) unless a dash rule underlines it (sqlite3 `-column`), then rows in which most header words line up with a cell that starts
//!   where the word starts (left-aligned columns) or ends where it ends (right-aligned
//!   numbers). A header word that repeats at its position in the first rows
//!   (`Compiling`, `at`) marks a log, not a table. An isolated row that does not line up
//!   (a `ps` row whose `VSZ` overflowed) stays in the table when an aligned row follows
//!   within two lines; the table ends at its last aligned row. Positions count
//!   characters, not bytes (`docker ps` cuts cells with `…`).
//! - *Tabbed* tables: a header of at least three tab-separated words, then rows with tabs
//!   (`mysql -B`, TSV).
//!
//! Rows are flagged by column, named in the header (case-insensitive):
//! - `STATUS`, `STATE`, `PHASE`, `HEALTH`, `CONDITION(S)`, `CONCLUSION`, `RESULT`,
//!   `OUTCOME`, `ACTIVE` (`systemctl list-units`), `REASON` (`kubectl get events`): a cell naming a failure (`Error`, `Err…`, `…Fail…`, `CrashLoopBackOff`,
//!   `…BackOff`, `OOMKilled`, `Evicted`, `NotReady`, `Unhealthy`, `Unknown`, `Pending`,
//!   `Terminating`, `Dead`, `Degraded`, `Restarting`, `Timeout`, …) or a non-zero
//!   `Exited (N)`. `Pending` and `Terminating` are kept on purpose: in a healthy listing
//!   they are rare, and a pod stuck in either is what one looks for.
//! - `RESTARTS` (and `RESTART`): a count above zero. A restart is a weaker signal than a
//!   bad status, and in a big cluster many pods have restarted once, so when more than
//!   [`MAX_RESTART_ROWS`] rows qualify only that many are flagged, highest counts first
//!   (earlier rows on ties).
//! - `FAILURES`, `FAILED`, `ERRORS`, `EXIT`, `EXIT_CODE`, `EXITCODE`, `RC`: a count or exit
//!   code above zero.
//! - `READY` (`0/1`, `2/3`): fewer ready than wanted, unless the status says the pod
//!   completed or succeeded (a finished job shows `0/1 Completed`).
//! - `USE%`, `IUSE%`, `CAPACITY` (`df`): at least [`FULL_PERCENT`] percent used, except
//!   loop devices and `/snap/` mounts, which are read-only images and always full.
//! - `STAT`/`S` (`ps`): a zombie (`Z…`).
//! - `TYPE`, `LEVEL`, `SEVERITY`: `Warning`, `Error`, `Critical` or `Fatal` (the events of
//!   `kubectl get events` and of `kubectl describe`).
//!
//! A table without a status-like column (`ps aux`) also flags a row holding one of a few
//! unmistakable status words as a whole cell word (`CrashLoopBackOff`, `OOMKilled`,
//! `FAILED`, `Error`, …).

use std::borrow::Cow;
use std::ops::Range;

/// Flagged `RESTARTS` rows kept at most, highest counts first.
pub const MAX_RESTART_ROWS: usize = 20;

/// A `Use%` at or above this many percent flags a `df` row.
pub const FULL_PERCENT: u32 = 95;

/// Tables shorter than this (data rows) are left to the line window.
pub const MIN_ROWS: usize = 8;

/// Middle rows the sampling aims to keep (before flagged and evidence rows).
const TARGET_SAMPLES: usize = 15;

/// The smallest sampling stride: a run of fewer than three omitted rows costs more as a
/// marker than it saves, and the window keeps such runs anyway.
const MIN_STRIDE: usize = 4;

/// The family of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Columns aligned by spaces or tabs (`ps`, `kubectl`, `docker`, `df`).
    Aligned,
    /// Columns separated by `|`, `│` or `║`, with a border under the header (psql, mysql,
    /// sqlite `-box`, aws).
    Piped,
    /// Columns separated by single tabs (`mysql -B`, TSV).
    Tabbed,
}

/// One column named in the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The header word (aligned) or the trimmed header cell (piped).
    pub name: String,
    /// For aligned tables, the character positions of the word in the header line; for
    /// piped and tabbed tables, the cell index in `start..start + 1`.
    pub span: Range<usize>,
}

/// What a table looks like in `lines` (rendered output lines, trailing spaces trimmed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The header line's index.
    pub header: usize,
    /// The data rows, contiguous. Borders between the header and the rows, and lines after
    /// the rows (a closing border, a `(42 rows)` footer), are outside this range.
    pub rows: Range<usize>,
    /// How the columns are separated.
    pub kind: Kind,
    /// The header's columns, in order.
    pub columns: Vec<Column>,
}

/// Finds the largest aligned table in `lines` (at least [`MIN_ROWS`] data rows; header
/// detected by column alignment or borders). `None` when there is none.
///
/// Linear in the input: every line is tried as a header at most once, a failed try reads
/// a bounded number of lines, and a found table is skipped whole.
pub fn detect(lines: &[&str]) -> Option<Layout> {
    let mut best: Option<Layout> = None;
    let mut i = 0;
    while i < lines.len() {
        if let Some(layout) =
            piped_at(lines, i).or_else(|| tabbed_at(lines, i)).or_else(|| aligned_at(lines, i))
        {
            let end = layout.rows.end;
            if best.as_ref().is_none_or(|b| layout.rows.len() > b.rows.len()) {
                best = Some(layout);
            }
            i = end;
        } else {
            i += 1;
        }
    }
    best
}

/// Rows that must survive (bad status, restarts, a full disk, …; see the module docs), as
/// line indices in increasing order.
pub fn flagged(lines: &[&str], layout: &Layout) -> Vec<usize> {
    let roles: Vec<(usize, Role)> = layout
        .columns
        .iter()
        .enumerate()
        .filter_map(|(c, col)| role(&col.name).map(|r| (c, r)))
        .collect();
    let has_status = roles.iter().any(|&(_, r)| r == Role::Status);
    let status_col = roles.iter().find(|&&(_, r)| r == Role::Status).map(|&(c, _)| c);
    let mut out = Vec::new();
    let mut restarts: Vec<(u64, usize)> = Vec::new();
    for i in layout.rows.clone() {
        let Some(row) = lines.get(i) else { break };
        let mut bad = false;
        for &(c, r) in &roles {
            let value = cell(row, layout, c);
            bad = match r {
                Role::Status => is_bad_status(value),
                Role::Stat => value.starts_with('Z'),
                Role::Level => {
                    let v = value.to_ascii_lowercase();
                    ["warning", "error", "critical", "fatal"].contains(&v.as_str())
                }
                Role::Count => leading_number(value).is_some_and(|n| n > 0),
                Role::Restarts => {
                    if let Some(n) = leading_number(value).filter(|&n| n > 0) {
                        restarts.push((n, i));
                    }
                    false
                }
                Role::Ready => {
                    let done = status_col.is_some_and(|s| {
                        let v = cell(row, layout, s).to_ascii_lowercase();
                        v.contains("completed") || v.contains("succeeded")
                    });
                    !done && is_short_ready(value)
                }
                Role::Use => {
                    let image = row.starts_with("/dev/loop") || row.contains(" /snap/");
                    !image && percent(value).is_some_and(|p| p >= FULL_PERCENT)
                }
            };
            if bad {
                break;
            }
        }
        if !bad && !has_status {
            bad = row.split_ascii_whitespace().any(|w| is_strong_status(w.trim_matches('|')));
        }
        if bad {
            out.push(i);
        }
    }
    // Highest counts first, earlier rows on ties: the sort is stable.
    restarts.sort_by_key(|r| std::cmp::Reverse(r.0));
    restarts.truncate(MAX_RESTART_ROWS);
    out.extend(restarts.into_iter().map(|(_, i)| i));
    out.sort_unstable();
    out.dedup();
    out
}

/// Which lines to keep: `keep[i]` is true for the header and borders, the first `head`
/// and last `tail` rows, the sampled middle rows, [`flagged`] rows, `evidence[i]` lines,
/// and every line outside the table. `keep.len() == lines.len()`.
///
/// The middle (rows after the head and before the tail) keeps every `stride`-th row,
/// the one in the middle of each stride, where `stride` is the middle's length divided by
/// 15 (rounded up, at least 4): about 15 sampled rows whatever the table's length, and no
/// omitted run so short that its marker costs more than it saves. Deterministic: the
/// choice depends only on the row positions.
pub fn sample(
    lines: &[&str],
    layout: &Layout,
    evidence: &[bool],
    head: usize,
    tail: usize,
) -> Vec<bool> {
    let mut keep = vec![true; lines.len()];
    let rows = layout.rows.start.min(lines.len())..layout.rows.end.min(lines.len());
    let n = rows.len();
    if head.saturating_add(tail) >= n {
        return keep;
    }
    let middle = rows.start + head..rows.end - tail;
    let stride = middle.len().div_ceil(TARGET_SAMPLES).max(MIN_STRIDE);
    for (j, i) in middle.enumerate() {
        keep[i] = j % stride == stride / 2 || evidence.get(i).copied().unwrap_or(false);
    }
    for i in flagged(lines, layout) {
        if let Some(k) = keep.get_mut(i) {
            *k = true;
        }
    }
    keep
}

/// What a named column says about a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Status,
    Stat,
    Count,
    Restarts,
    Ready,
    Use,
    Level,
}

fn role(name: &str) -> Option<Role> {
    let upper = name.trim().to_ascii_uppercase();
    Some(match upper.as_str() {
        "STATUS" | "STATE" | "PHASE" | "HEALTH" | "CONDITION" | "CONDITIONS" | "CONCLUSION"
        | "RESULT" | "OUTCOME" | "ACTIVE" | "REASON" => Role::Status,
        "TYPE" | "LEVEL" | "SEVERITY" => Role::Level,
        "STAT" | "S" => Role::Stat,
        "RESTARTS" | "RESTART" => Role::Restarts,
        "FAILURES" | "FAILED" | "ERRORS" | "EXIT" | "EXIT_CODE" | "EXITCODE" | "RC" => Role::Count,
        "READY" => Role::Ready,
        "USE%" | "IUSE%" | "CAPACITY" => Role::Use,
        _ => return None,
    })
}

/// Returns true if and only if a status cell names a failure or a stuck state.
fn is_bad_status(value: &str) -> bool {
    const BAD: &[&str] = &[
        "err",
        "fail",
        "crashloop",
        "backoff",
        "oomkilled",
        "evicted",
        "notready",
        "not ready",
        "unhealthy",
        "unknown",
        "pending",
        "terminating",
        "dead",
        "degraded",
        "invalid",
        "killed",
        "timeout",
        "timed out",
        "timedout",
        "unavailable",
        "restarting",
        "outof",
        "lost",
        "panic",
        "abort",
    ];
    if value.is_empty() {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if let Some(at) = lower.find("exited (") {
        let code = &lower[at + "exited (".len()..];
        let digits = code.find(|c: char| !c.is_ascii_digit()).unwrap_or(code.len());
        if code[..digits].parse::<u64>().is_ok_and(|c| c != 0) {
            return true;
        }
    }
    BAD.iter().any(|w| lower.contains(w))
}

/// Returns true if and only if `word` is a status no ordinary cell holds by accident.
fn is_strong_status(word: &str) -> bool {
    matches!(
        word,
        "CrashLoopBackOff"
            | "ImagePullBackOff"
            | "ErrImagePull"
            | "OOMKilled"
            | "Error"
            | "ERROR"
            | "Failed"
            | "FAILED"
            | "Evicted"
            | "NotReady"
            | "Unhealthy"
            | "(unhealthy)"
    )
}

/// The integer a cell starts with (`5`, `5 (2m ago)`).
fn leading_number(value: &str) -> Option<u64> {
    let end = value.find(|c: char| !c.is_ascii_digit()).unwrap_or(value.len());
    value[..end].parse().ok()
}

/// The percentage of a `df` cell (`100%`).
fn percent(value: &str) -> Option<u32> {
    value.strip_suffix('%')?.parse().ok()
}

/// Returns true if and only if a `READY` cell reads `a/b` with `a < b`.
fn is_short_ready(value: &str) -> bool {
    let Some((a, b)) = value.split_once('/') else { return false };
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(a), Ok(b)) => a < b,
        _ => false,
    }
}

/// The text of column `c` in `row`, trimmed; empty when the row has no such cell.
fn cell<'a>(row: &'a str, layout: &Layout, c: usize) -> &'a str {
    let Some(col) = layout.columns.get(c) else { return "" };
    match layout.kind {
        Kind::Piped => split_piped(row).nth(col.span.start).map_or("", str::trim),
        Kind::Tabbed => row.split('\t').nth(col.span.start).map_or("", str::trim),
        Kind::Aligned => {
            let next = layout.columns.get(c + 1).map_or(usize::MAX, |n| n.span.start);
            aligned_cell(row, col.span.clone(), next)
        }
    }
}

/// The cell of an aligned column with header word `span` (character positions): from
/// the word's start to the next header word when the row's cell starts there
/// (left-aligned, may hold spaces, as `Exited (1) 2 hours ago`), the word ending where the
/// header word ends (right-aligned), else the word under the header word.
fn aligned_cell(row: &str, span: Range<usize>, next: usize) -> &str {
    let b = shape(row);
    let (s, e) = (span.start, span.end);
    if starts_word(&b, s) {
        return text_of(row, s..next.min(b.len())).trim();
    }
    if ends_word(&b, e) {
        return word_around(row, &b, e - 1);
    }
    (s..e.min(b.len())).find(|&p| !is_blank(b[p])).map_or("", |p| word_around(row, &b, p))
}

/// The whitespace-delimited word of `row` holding character `at`; `b` is its shape.
fn word_around<'a>(row: &'a str, b: &[u8], at: usize) -> &'a str {
    let mut s = at;
    while s > 0 && !is_blank(b[s - 1]) {
        s -= 1;
    }
    let mut e = at;
    while e < b.len() && !is_blank(b[e]) {
        e += 1;
    }
    text_of(row, s..e)
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Returns true if and only if a word of `b` starts at byte `s`.
fn starts_word(b: &[u8], s: usize) -> bool {
    s < b.len() && !is_blank(b[s]) && (s == 0 || is_blank(b[s - 1]))
}

/// Returns true if and only if a word of `b` ends at byte `e` (exclusive).
fn ends_word(b: &[u8], e: usize) -> bool {
    e > 0 && e <= b.len() && !is_blank(b[e - 1]) && (e == b.len() || is_blank(b[e]))
}

/// The ranges of the words of a line's [`shape`].
fn words(b: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if is_blank(b[i]) {
            i += 1;
            continue;
        }
        let s = i;
        while i < b.len() && !is_blank(b[i]) {
            i += 1;
        }
        out.push(s..i);
    }
    out
}

/// The blank/non-blank shape of a line, one byte per character (`b' '` or the byte
/// itself), so positions count characters: terminal tables align on what one sees, and
/// `docker ps` truncates cells with a three-byte `…`.
fn shape(line: &str) -> Cow<'_, [u8]> {
    if line.is_ascii() {
        Cow::Borrowed(line.as_bytes())
    } else {
        Cow::Owned(line.chars().map(|c| if c == ' ' || c == '\t' { b' ' } else { b'x' }).collect())
    }
}

/// The byte offset of character `p` of `line` (its length past the end).
fn byte_at(line: &str, p: usize) -> usize {
    if line.is_ascii() {
        p.min(line.len())
    } else {
        line.char_indices().nth(p).map_or(line.len(), |(b, _)| b)
    }
}

/// The text of `line` between character positions `span`.
fn text_of(line: &str, span: Range<usize>) -> &str {
    let s = byte_at(line, span.start);
    let e = byte_at(line, span.end);
    line.get(s..e.max(s)).unwrap_or("")
}

/// An aligned table whose header is line `i`.
fn aligned_at(lines: &[&str], i: usize) -> Option<Layout> {
    let header = lines[i];
    // Most lines of a long text are not headers; reject them before splitting them.
    let lead = header.trim_start().chars().next();
    let underlined = lines.get(i + 1).is_some_and(|l| is_dash_rule(l));
    if !underlined && !lead.is_some_and(|c| c.is_uppercase() || c == '%' || c == '#') {
        return None;
    }
    if header.contains(['|', '│', '║']) {
        return None;
    }
    let head_shape = shape(header);
    let spans = words(&head_shape);
    if spans.len() < 3 {
        return None;
    }
    let names: Vec<&str> = spans.iter().map(|s| text_of(header, s.clone())).collect();
    if !is_header(&names) {
        return None;
    }
    let mut start = i + 1;
    // sqlite3 `-column` and `pip list` underline the header with dashes; other tools
    // capitalise it.
    if lines.get(start).is_some_and(|l| is_dash_rule(l)) {
        start += 1;
    } else if !is_capitalised(&names) {
        return None;
    }
    // A header word repeating at its position in the first rows marks a log line.
    let probe = &lines[start.min(lines.len())..(start + MIN_ROWS).min(lines.len())];
    for (span, name) in spans.iter().zip(&names) {
        let same = probe
            .iter()
            .filter(|r| {
                starts_word(&shape(r), span.start)
                    && text_of(r, span.clone()) == *name
                    && ends_word(&shape(r), span.end)
            })
            .count();
        if same * 2 > probe.len() {
            return None;
        }
    }
    let need = (spans.len() * 3).div_ceil(5).max(2);
    let aligned = |row: &str| {
        let b = shape(row);
        let hits =
            spans.iter().filter(|s| starts_word(&b, s.start) || ends_word(&b, s.end)).count();
        hits >= need
    };
    let mut end = start;
    let mut j = start;
    while j < lines.len() {
        let row = lines[j];
        if row.is_empty() {
            break;
        }
        if aligned(row) {
            j += 1;
            end = j;
        } else if (j + 1..(j + 3).min(lines.len()))
            .any(|k| !lines[k].is_empty() && aligned(lines[k]))
        {
            j += 1;
        } else {
            break;
        }
    }
    if end - start < MIN_ROWS {
        return None;
    }
    let columns = spans
        .into_iter()
        .zip(names)
        .map(|(span, name)| Column { name: name.to_owned(), span })
        .collect();
    Some(Layout { header: i, rows: start..end, kind: Kind::Aligned, columns })
}

/// Returns true if and only if `words` can be a header: each names a column (holds a
/// letter, or is `#`) and at most one holds a digit (`1K-blocks`), where log lines and
/// data rows hold several.
fn is_header(words: &[&str]) -> bool {
    words.iter().all(|w| *w == "#" || w.chars().any(char::is_alphabetic))
        && words.iter().filter(|w| w.bytes().any(|c| c.is_ascii_digit())).count() <= 1
}

/// Returns true if and only if a header reads as one: its first word and at least two
/// thirds of its words start with a capital (`NAME`, `Filesystem`) or with `%`/`#`
/// (`%CPU`). Prose, `git log --oneline` and log lines rarely do.
fn is_capitalised(words: &[&str]) -> bool {
    let capital = |w: &str| w.starts_with(|c: char| c.is_uppercase() || c == '%' || c == '#');
    words.first().is_some_and(|w| capital(w))
        && words.iter().filter(|w| capital(w)).count() * 3 >= words.len() * 2
}

/// A tab-separated table whose header is line `i`: a header of at least three words split
/// by tabs, then rows with tabs. Trailing empty cells lose their tabs to trimming, so a row
/// may hold fewer tabs than the header, never more.
fn tabbed_at(lines: &[&str], i: usize) -> Option<Layout> {
    let header = lines[i];
    let k = header.matches('\t').count();
    if k < 2 {
        return None;
    }
    let names: Vec<&str> = header.split('\t').map(str::trim).collect();
    if !is_header(&names) || names.iter().any(|n| n.is_empty()) {
        return None;
    }
    let start = i + 1;
    let mut end = start;
    while end < lines.len() && (1..=k).contains(&lines[end].matches('\t').count()) {
        end += 1;
    }
    if end - start < MIN_ROWS {
        return None;
    }
    let columns = names
        .into_iter()
        .enumerate()
        .map(|(c, name)| Column { name: name.to_owned(), span: c..c + 1 })
        .collect();
    Some(Layout { header: i, rows: start..end, kind: Kind::Tabbed, columns })
}

const SEPARATORS: [char; 3] = ['|', '│', '║'];

/// The cells of a piped line: the text between separators, a leading and trailing empty
/// cell dropped (mysql and box tables open and close with a separator).
fn split_piped(line: &str) -> impl Iterator<Item = &str> {
    let t = line.trim();
    let t = t.strip_prefix(SEPARATORS).unwrap_or(t);
    let t = t.strip_suffix(SEPARATORS).unwrap_or(t);
    t.split(SEPARATORS)
}

fn separators(line: &str) -> usize {
    line.chars().filter(|c| SEPARATORS.contains(c)).count()
}

/// Returns true if and only if `line` is a table border: only box-drawing characters,
/// `+`, `-`, `=`, `:`, separators and spaces, with at least three rule characters.
fn is_border(line: &str) -> bool {
    let mut rule = 0;
    for c in line.chars() {
        match c {
            '-' | '=' | '─' | '━' | '═' => rule += 1,
            '+' | ':' | ' ' | '\t' | '|' | '│' | '║' | '┃' => {}
            '┌' | '┐' | '└' | '┘' | '├' | '┤' | '┬' | '┴' | '┼' | '╭' | '╮' | '╯' | '╰' | '╔'
            | '╗' | '╚' | '╝' | '╠' | '╣' | '╦' | '╩' | '╬' | '╞' | '╡' | '╪' | '╟' | '╢' | '╤'
            | '╧' | '╫' => {}
            _ => return false,
        }
    }
    rule >= 3
}

/// Returns true if and only if `line` is dashes and spaces only (sqlite3 `-column`).
fn is_dash_rule(line: &str) -> bool {
    line.contains("--") && line.bytes().all(|b| b == b'-' || is_blank(b))
}

/// A piped table whose header is line `i`.
fn piped_at(lines: &[&str], i: usize) -> Option<Layout> {
    let header = lines[i];
    let k = separators(header);
    if k == 0 || is_border(header) || !header.chars().any(char::is_alphabetic) {
        return None;
    }
    // Only the first line of a run of like lines can be a header; this keeps the scan
    // linear.
    if i > 0 && !is_border(lines[i - 1]) && separators(lines[i - 1]) == k {
        return None;
    }
    if !lines.get(i + 1).is_some_and(|l| is_border(l)) {
        return None;
    }
    let start = i + 2;
    let mut end = start;
    while end < lines.len() && !is_border(lines[end]) && separators(lines[end]) == k {
        end += 1;
    }
    if end - start < MIN_ROWS {
        return None;
    }
    let columns = split_piped(header)
        .enumerate()
        .map(|(c, name)| Column { name: name.trim().to_owned(), span: c..c + 1 })
        .collect();
    Some(Layout { header: i, rows: start..end, kind: Kind::Piped, columns })
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    fn lines(text: &str) -> Vec<&str> {
        text.lines().map(str::trim_end).collect()
    }

    fn ps_aux(rows: usize) -> String {
        let mut t = String::from(
            "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n",
        );
        for i in 0..rows {
            let user = ["root", "www-data", "postgres", "alice"][i % 4];
            let _ = writeln!(
                t,
                "{user:<8} {pid:>7} {cpu:>4.1} {mem:>4.1} {vsz:>6} {rss:>5} {tty:<8} {stat:<4} 10:{m:02}   {tm}:{s:02} /usr/bin/worker --id {i} --queue q{q}",
                pid = 1000 + i * 7,
                cpu = (i % 13) as f64 / 3.0,
                mem = (i % 7) as f64 / 2.0,
                vsz = 10_000 + (i * 37) % 90_000,
                rss = 1_000 + (i * 13) % 9_000,
                tty = if i.is_multiple_of(5) { "pts/0" } else { "?" },
                stat = ["Ss", "S", "R+", "Sl"][i % 4],
                m = i % 60,
                tm = i % 10,
                s = i % 60,
                q = i % 3,
            );
        }
        t
    }

    fn kubectl(rows: usize, bad: usize) -> String {
        let mut t = String::from(
            "NAMESPACE     NAME                                READY   STATUS             RESTARTS       AGE\n",
        );
        for i in 0..rows {
            let (ready, status, restarts) = if i == bad {
                ("0/1", "CrashLoopBackOff", "42 (3m ago)")
            } else {
                ("1/1", "Running", "0")
            };
            let _ = writeln!(
                t,
                "{ns:<13} {name:<35} {ready:<7} {status:<18} {restarts:<14} {age}d",
                ns = ["default", "kube-system", "monitoring"][i % 3],
                name = format!("api-{i:04}-7d9f8c6b5-x{}", i % 10),
                age = 3 + i % 20,
            );
        }
        t
    }

    fn kept_rows(keep: &[bool], layout: &Layout) -> usize {
        layout.rows.clone().filter(|&i| keep[i]).count()
    }

    #[test]
    fn ps_aux_is_sampled_to_head_tail_and_middle() {
        let text = ps_aux(300);
        let l = lines(&text);
        let layout = detect(&l).expect("ps aux is a table");
        assert_eq!(layout.header, 0);
        assert_eq!(layout.rows, 1..301);
        assert_eq!(layout.kind, Kind::Aligned);
        let keep = sample(&l, &layout, &vec![false; l.len()], 5, 3);
        assert!(keep[0], "header kept");
        assert!(keep[1..6].iter().all(|&k| k), "head kept");
        assert!(keep[298..301].iter().all(|&k| k), "tail kept");
        let middle = kept_rows(&keep, &layout) - 8;
        assert!((10..=20).contains(&middle), "{middle} middle rows");
        assert_eq!(keep.len(), l.len());
    }

    #[test]
    fn ps_zombie_is_flagged() {
        let mut text = ps_aux(50);
        text.push_str(
            "alice      99999  0.0  0.0      0     0 ?        Z    10:00   0:00 [worker] <defunct>\n",
        );
        text.push_str(&ps_aux(50).lines().skip(1).collect::<Vec<_>>().join("\n"));
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!(layout.rows, 1..102);
        assert_eq!(flagged(&l, &layout), vec![51]);
    }

    #[test]
    fn kubectl_crashloop_row_is_kept() {
        let text = kubectl(200, 117);
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!(layout.rows, 1..201);
        assert_eq!(flagged(&l, &layout), vec![118]);
        let keep = sample(&l, &layout, &vec![false; l.len()], 3, 3);
        assert!(keep[118]);
        assert!(l[118].contains("CrashLoopBackOff"));
    }

    #[test]
    fn kubectl_restarts_and_not_ready_are_flagged() {
        let mut text = kubectl(40, usize::MAX);
        text = text.replacen("1/1     Running            0 ", "1/1     Running            3 ", 1);
        text = text.replacen("1/1     Running", "0/1     Running", 2);
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        // Row 1: restarts 3 and 0/1 ready; row 2: 0/1 ready.
        assert_eq!(flagged(&l, &layout), vec![1, 2]);
    }

    #[test]
    fn restart_rows_are_capped_highest_first() {
        let mut text = String::from("NAME      READY   STATUS    RESTARTS   AGE\n");
        for i in 0..100 {
            let _ = writeln!(text, "pod-{i:04}  1/1     Running   {:<10} 5d", i % 7);
        }
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        let f = flagged(&l, &layout);
        assert_eq!(f.len(), MAX_RESTART_ROWS);
        assert!(f.iter().all(|&i| l[i].contains("Running   6") || l[i].contains("Running   5")));
    }

    #[test]
    fn df_full_disk_is_flagged_but_not_snaps() {
        let mut text = String::from("Filesystem      Size  Used Avail Use% Mounted on\n");
        for i in 0..20 {
            let _ = writeln!(
                text,
                "/dev/sdb{i:<7} 100G   {:>2}G   {:>2}G  {:>2}% /data/{i}",
                40, 60, 40
            );
        }
        text.push_str("/dev/sda1        98G   98G     0 100% /\n");
        text.push_str("/dev/loop3       56M   56M     0 100% /snap/core18/2812\n");
        text.push_str("tmpfs           3.2G  2.0M  3.2G   1% /run\n");
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!(layout.rows, 1..24);
        assert_eq!(flagged(&l, &layout), vec![21]);
    }

    #[test]
    fn docker_ps_nonzero_exit_is_flagged() {
        let mut text = String::from(
            "CONTAINER ID   IMAGE          COMMAND                  CREATED        STATUS                       PORTS                    NAMES\n",
        );
        for i in 0..30usize {
            let status = match i {
                12 => "Exited (137) 2 hours ago",
                20 => "Exited (0) 3 hours ago",
                _ => "Up 2 hours",
            };
            let ports = if i.is_multiple_of(2) { "0.0.0.0:8080->80/tcp" } else { "" };
            let _ = writeln!(
                text,
                "{id:<14} nginx:1.{v:<6} \"/docker-entrypoint.…\"   {h} hours ago    {status:<28} {ports:<24} web_{i}",
                id = format!("{:012x}", 0xabc000 + i * 977),
                v = 20 + i % 5,
                h = 2 + i % 3,
            );
        }
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!(layout.rows, 1..31);
        assert_eq!(flagged(&l, &layout), vec![13]);
    }

    fn psql(rows: usize) -> String {
        let mut text = String::from(
            "SELECT 500\n id  |    name     | status\n-----+-------------+---------\n",
        );
        for i in 0..rows {
            let status = if i == 250 { "failed" } else { "ok" };
            let _ = writeln!(text, " {i:>3} | user_{i:<6} | {status}");
        }
        let _ = writeln!(text, "({rows} rows)\n");
        text
    }

    #[test]
    fn psql_with_borders_and_footer() {
        let text = psql(500);
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!(layout.kind, Kind::Piped);
        assert_eq!(layout.header, 1);
        assert_eq!(layout.rows, 3..503);
        assert_eq!(l[503], "(500 rows)");
        assert_eq!(flagged(&l, &layout), vec![253]);
        let keep = sample(&l, &layout, &vec![false; l.len()], 4, 4);
        assert!(keep[0] && keep[1] && keep[2] && keep[503], "text, header, border, footer");
        assert!(keep[253]);
        assert!(kept_rows(&keep, &layout) < 40);
    }

    #[test]
    fn mysql_and_box_tables() {
        let mut text = String::from("+----+--------+\n| id | state  |\n+----+--------+\n");
        for i in 0..12 {
            let _ = writeln!(text, "| {i:>2} | {:<6} |", if i == 5 { "FAILED" } else { "ok" });
        }
        text.push_str("+----+--------+\n12 rows in set (0.00 sec)\n");
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!((layout.header, layout.rows.clone()), (1, 3..15));
        assert_eq!(flagged(&l, &layout), vec![8]);

        let mut text = String::from("┌────┬───────┐\n│ id │ state │\n├────┼───────┤\n");
        for i in 0..10 {
            let _ = writeln!(text, "│ {i:>2} │ ok    │");
        }
        text.push_str("└────┴───────┘\n");
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!((layout.header, layout.rows), (1, 3..13));
    }

    #[test]
    fn sqlite_column_mode() {
        let mut text = String::from("id  name      state\n--  --------  -------\n");
        for i in 0..10 {
            let _ = writeln!(text, "{i:<3} item{i:<5} {}", if i == 9 { "error" } else { "done" });
        }
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!((layout.header, layout.rows.clone()), (0, 2..12));
        assert_eq!(flagged(&l, &layout), vec![11]);
    }

    #[test]
    fn tab_separated() {
        let mut text = String::from("id\tname\tstatus\n");
        for i in 0..10 {
            let _ = writeln!(text, "{i}\tjob-{i}\t{}", if i == 4 { "Failed" } else { "Succeeded" });
        }
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!((layout.kind, layout.header, layout.rows.clone()), (Kind::Tabbed, 0, 1..11));
        assert_eq!(flagged(&l, &layout), vec![5]);
    }

    #[test]
    fn systemctl_failed_unit_is_flagged() {
        let mut text =
            String::from("  UNIT                         LOAD   ACTIVE SUB     DESCRIPTION\n");
        for i in 0..15 {
            let (mark, active, sub) =
                if i == 9 { ("●", "failed", "failed ") } else { (" ", "active", "running") };
            let _ = writeln!(
                text,
                "{mark} unit-{i:02}.service              loaded {active} {sub} Unit {i}"
            );
        }
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!(layout.rows, 1..16);
        assert_eq!(flagged(&l, &layout), vec![10]);
    }

    #[test]
    fn kubectl_events_warnings_are_flagged() {
        let mut text = String::from(
            "Events:\n  Type     Reason     Age   From     Message\n  ----     ------     ----  ----     -------\n",
        );
        for i in 0..12 {
            let (kind, reason) =
                if i == 6 { ("Warning", "BackOff") } else { ("Normal ", "Pulled ") };
            let _ = writeln!(text, "  {kind}  {reason}    {i}m    kubelet  Event number {i}");
        }
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!((layout.header, layout.rows.clone()), (1, 3..15));
        assert_eq!(flagged(&l, &layout), vec![9]);
    }

    #[test]
    fn helm_list_with_padded_tabs() {
        let mut text = String::from(
            "NAME       \tNAMESPACE\tREVISION\tUPDATED                             \tSTATUS  \tCHART        \tAPP VERSION\n",
        );
        for i in 0..12 {
            let status = if i == 7 { "failed  " } else { "deployed" };
            let _ = writeln!(
                text,
                "release-{i:02}\tdefault  \t{:<8}\t2026-11-30 04:00:00.1 +0000 UTC\t{status}\tapp-1.{i:<6}\t1.0.{i}",
                i + 1
            );
        }
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!((layout.kind, layout.rows.clone()), (Kind::Tabbed, 1..13));
        assert_eq!(flagged(&l, &layout), vec![8]);
    }

    #[test]
    fn text_around_the_table_is_kept() {
        let mut text = String::from("Warning: kubectl is newer than the server\n");
        text.push_str(&kubectl(100, 50));
        text.push_str("\nsome trailing note about the listing\n");
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!(layout.header, 1);
        let keep = sample(&l, &layout, &vec![false; l.len()], 2, 2);
        assert!(keep[0] && keep[1]);
        assert!(keep[layout.rows.end..].iter().all(|&k| k));
    }

    #[test]
    fn evidence_and_flagged_rows_are_always_kept() {
        let text = ps_aux(500);
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        let mut evidence = vec![false; l.len()];
        for i in (7..l.len()).step_by(37) {
            evidence[i] = true;
        }
        let keep = sample(&l, &layout, &evidence, 0, 0);
        assert!(evidence.iter().zip(&keep).all(|(&e, &k)| !e || k));
        assert!(keep[layout.header]);
    }

    #[test]
    fn sampling_is_deterministic() {
        let text = kubectl(1000, 777);
        let l = lines(&text);
        let a = detect(&l).unwrap();
        let b = detect(&l).unwrap();
        assert_eq!(a, b);
        let ev = vec![false; l.len()];
        assert_eq!(sample(&l, &a, &ev, 5, 5), sample(&l, &b, &ev, 5, 5));
    }

    #[test]
    fn short_tables_keep_everything() {
        let text = kubectl(12, usize::MAX);
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        let keep = sample(&l, &layout, &vec![false; l.len()], 10, 5);
        assert!(keep.iter().all(|&k| k));
        assert!(detect(&lines(&kubectl(5, 0))).is_none(), "fewer than 8 rows");
    }

    #[test]
    fn non_tables_are_not_detected() {
        let prose = "The quick brown fox jumps over the lazy dog and keeps running far away.\n\
            It was the best of times, it was the worst of times, it was the age of wisdom,\n\
            it was the age of foolishness, it was the epoch of belief, it was the epoch of\n\
            incredulity, it was the season of Light, it was the season of Darkness, it was\n\
            the spring of hope, it was the winter of despair, we had everything before us,\n\
            we had nothing before us, we were all going direct to Heaven, we were all going\n\
            direct the other way - in short, the period was so far like the present period,\n\
            that some of its noisiest authorities insisted on its being received, for good\n\
            or for evil, in the superlative degree of comparison only. There were a king\n\
            with a large jaw and a queen with a plain face, on the throne of England.\n";
        assert!(detect(&lines(prose)).is_none());

        let mut cargo = String::new();
        for (name, v) in [
            ("libc", "0.2.150"),
            ("serde", "1.0.193"),
            ("memchr", "2.6.4"),
            ("regex", "1.10.2"),
            ("anyhow", "1.0.75"),
            ("clap", "4.4.11"),
            ("itoa", "1.0.9"),
            ("ryu", "1.0.15"),
            ("syn", "2.0.39"),
            ("quote", "1.0.33"),
            ("nix", "0.27.1"),
        ] {
            let _ = writeln!(cargo, "   Compiling {name} v{v}");
        }
        cargo.push_str("error[E0308]: mismatched types\n  --> src/main.rs:4:5\n");
        assert!(detect(&lines(&cargo)).is_none());

        let mut trace =
            String::from("Exception in thread \"main\" java.lang.IllegalStateException: boom\n");
        for i in 0..20 {
            let _ = writeln!(trace, "\tat com.example.Service.method{i}(Service.java:{})", 10 + i);
        }
        assert!(detect(&lines(&trace)).is_none());

        let mut log = String::new();
        for i in 0..50 {
            let _ = writeln!(
                log,
                "2026-11-30T02:00:{:02}Z INFO request id={i} path=/api status=200",
                i % 60
            );
        }
        assert!(detect(&lines(&log)).is_none());

        let mut oneline = String::new();
        for i in 0..30 {
            let _ = writeln!(
                oneline,
                "{:07x} Fix {} in module_{i}",
                0x1a2b3c4 + i * 7919,
                ["typo", "bug", "race"][i % 3]
            );
        }
        assert!(detect(&lines(&oneline)).is_none());

        let mut tree = String::from(".\n");
        for i in 0..20 {
            let _ = writeln!(tree, "│   ├── file_{i}.rs");
        }
        assert!(detect(&lines(&tree)).is_none());
    }

    #[test]
    fn largest_table_wins() {
        let mut text = kubectl(10, usize::MAX);
        text.push('\n');
        text.push_str(&ps_aux(40));
        let l = lines(&text);
        let layout = detect(&l).unwrap();
        assert_eq!(layout.header, 12);
        assert_eq!(layout.rows.len(), 40);
    }
}
